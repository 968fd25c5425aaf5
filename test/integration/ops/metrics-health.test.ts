import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../../helpers/backends.ts';
import { getJob, submit, submitSleep, waitForStatus } from '../../helpers/jobs.ts';
import { histogramCount, histogramSeries, parseMetrics, sample } from '../../helpers/prometheus.ts';
import { ADMIN_KEY, startTestServer, type TestServer } from '../../helpers/server.ts';

for (const backend of backends()) {
  describe(`metrics and health (${backend.name})`, () => {
    let t: TestServer;
    before(async () => {
      t = await startTestServer(backend, { metricsToken: 'scrape-token-0123456789' });
      assert.equal((await t.req('POST', '/Queue/GLOBAL.Parked', { body: { Held: true } })).status, 201);
    });
    after(() => t.close());

    const scrape = async () => {
      const res = await t.req('GET', '//metrics', {
        key: null,
        headers: { authorization: 'Bearer scrape-token-0123456789' },
      });
      assert.equal(res.status, 200, res.body);
      assert.match(String(res.headers['content-type']), /^text\/plain/);
      return { m: parseMetrics(res.body), text: res.body };
    };

    test('GET /metrics, parsed by a Prometheus text parser, counts jobs, queues, requests and the process', async () => {
      const done = await submitSleep(t, 0);
      await waitForStatus(t, done.jobId, 'Completed');
      const parked = await submit(t, 'GLOBAL.System_Sleep', {
        Queue: 'GLOBAL.Parked',
        JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }],
      });
      assert.equal((await getJob(t, parked.jobId)).Status, 'QueueHeld');
      const { m, text } = await scrape();
      assert.ok((sample(m, 'millrace_jobs', { status: 'Completed' }) ?? 0) >= 1, 'jobs by status');
      assert.equal(sample(m, 'millrace_queue_depth', { queue: 'GLOBAL.Parked' }), 1, 'queue depth');
      assert.ok((sample(m, 'millrace_jobs_started_total', { definition_type: 'System' }) ?? 0) >= 1);
      assert.ok(
        (sample(m, 'millrace_jobs_finished_total', { definition_type: 'System', status: 'Completed' }) ?? 0) >= 1,
      );
      assert.equal(m.get('millrace_job_start_latency_seconds')?.type, 'HISTOGRAM');
      assert.ok((sample(m, 'millrace_job_start_latency_seconds') ?? 0) >= 1, 'a start latency was observed');
      assert.equal(sample(m, 'millrace_alerts_open'), 0);
      assert.equal(sample(m, 'millrace_agents_connected'), 0, 'no agent (this server does not listen)');
      assert.equal(m.get('millrace_db_transaction_duration_seconds')?.type, 'HISTOGRAM');
      assert.ok((histogramCount(text, 'millrace_db_transaction_duration_seconds', { outcome: 'commit' }) ?? 0) >= 1);
      // Requests are labelled by route pattern, never by the raw URL.
      assert.equal(m.get('millrace_http_request_duration_seconds')?.type, 'HISTOGRAM');
      const routes = new Set(histogramSeries(text, 'millrace_http_request_duration_seconds').map((x) => x.route));
      assert.ok(
        [...routes].some((r) => r?.endsWith('/Job/:id') || r?.includes('/Job/:')),
        [...routes].join(' '),
      );
      assert.ok(![...routes].some((r) => r?.includes(`/Job/${done.jobId}`)), 'no raw job ids in labels');
      assert.ok((sample(m, 'process_resident_memory_bytes') ?? 0) > 0, 'RSS');
      assert.ok(m.has('nodejs_eventloop_lag_p99_seconds'), 'event-loop delay');
      if (backend.name === 'postgres') {
        assert.ok((sample(m, 'millrace_db_pool_connections', { state: 'total' }) ?? 0) >= 1);
        // A submit is at least BEGIN, its insert and COMMIT; the scrape's own two reads come on top.
        const before = sample(m, 'millrace_db_round_trips_total') ?? 0;
        await submit(t, 'GLOBAL.System_Sleep', { JobParameters: [{ Name: 'MilliSeconds', InValueNumber: 0 }] });
        const after = sample((await scrape()).m, 'millrace_db_round_trips_total') ?? 0;
        assert.ok(after - before >= 5, `round trips ${before} → ${after}`);
      }
    });

    test('the metrics token is required when set, and the API key is neither needed nor enough', async () => {
      const none = await t.req('GET', '//metrics', { key: null });
      assert.equal(none.status, 401);
      assert.equal(none.json.code, '401');
      const wrong = await t.req('GET', '//metrics', { key: ADMIN_KEY, headers: { authorization: 'Bearer nope' } });
      assert.equal(wrong.status, 401);
    });

    test('GET /health/live and /health/ready answer JSON without a key, with a request id', async () => {
      const live = await t.req('GET', '//health/live', { key: null });
      assert.equal(live.status, 200);
      assert.deepEqual(live.json, { status: 'live' });
      const ready = await t.req('GET', '//health/ready', { key: null, headers: { 'x-request-id': 'probe-42' } });
      assert.equal(ready.status, 200, ready.body);
      assert.deepEqual(ready.json, { status: 'ready' });
      assert.equal(ready.headers['x-request-id'], 'probe-42', 'a plain client id is kept');
      const other = await t.req('GET', '/Queue/GLOBAL.Default');
      assert.match(String(other.headers['x-request-id']), /^[0-9a-f]{14}$/);
    });
  });
}
