/**
 * Definitions: browse and search (`GET {base}/JobDefinition?Search=…`, paged by cursor), open one, and submit
 * it with a form built from its parameters.
 */
import { api, withQuery } from '../api.js';
import { fill, h } from '../dom.js';
import { errorText, text } from '../format.js';
import { parameterForm } from '../param-form.js';
import { runtimeSection } from '../runtime-chart.js';
import { navigate } from '../router.js';
import { can, partitionOf } from '../session.js';
/** @import { Job, JobDefinition, Page } from '../api-types.js' */

const FIELDS = 'businessKey,Name,Partition,JobDefinitionType,Description';

/**
 * @param {HTMLElement} main
 * @param {Record<string, string>} _params
 * @param {Record<string, string>} query
 */
export function renderDefinitions(main, _params, query) {
  const search = h('input', {
    name: 'Search',
    id: 'def-search',
    placeholder: 'Search name or description',
    value: query.Search ?? '',
  });
  const form = h('form', { class: 'filters' }, search, h('button', { type: 'submit' }, 'Search'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    navigate('/definitions', { Search: search.value.trim() });
  });
  const body = h('tbody', { id: 'definitions-body' });
  const info = h('p', { class: 'muted' });
  const more = h('button', { type: 'button', hidden: true }, 'More');
  let after = '';

  async function load() {
    try {
      /** @type {Page<JobDefinition>} */
      const res = await api(
        'GET',
        withQuery('/JobDefinition', { Search: query.Search, Limit: 100, After: after, fields: FIELDS }),
      );
      for (const d of res.items) {
        const key = `${d.Partition}.${d.Name}`;
        body.append(
          h(
            'tr',
            {},
            h('td', {}, h('a', { href: `#/definition/${encodeURIComponent(key)}` }, key)),
            h('td', {}, text(d.JobDefinitionType)),
            h('td', { class: 'desc' }, text(d.Description)),
          ),
        );
      }
      after = res.next ?? '';
      more.hidden = !res.next;
      info.textContent = body.children.length ? '' : 'No definitions match.';
    } catch (err) {
      info.textContent = errorText(err);
    }
  }
  more.addEventListener('click', () => void load());
  fill(
    main,
    h('h1', {}, 'Definitions'),
    form,
    h(
      'table',
      { class: 'definitions' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Definition'), h('th', {}, 'Type'), h('th', {}, 'Description'))),
      body,
    ),
    more,
    info,
  );
  void load();
}

/**
 * @param {HTMLElement} main
 * @param {Record<string, string>} params
 */
export async function renderDefinition(main, { key = '' }) {
  /** @type {JobDefinition} */
  let d;
  try {
    d = await api('GET', `/JobDefinition/${encodeURIComponent(key)}`);
  } catch (err) {
    fill(main, h('h1', {}, key), h('p', { class: 'error' }, errorText(err)));
    return;
  }
  const fullKey = `${d.Partition}.${d.Name}`;
  const params = (d.Parameters ?? []).map((p) =>
    h(
      'tr',
      {},
      h('td', {}, p.Name),
      h('td', {}, p.Direction),
      h('td', {}, p.DataType),
      h('td', { class: 'value' }, text(p.DefaultValue)),
      h('td', {}, p.Optional ? 'optional' : 'mandatory'),
      h('td', { class: 'desc' }, text(p.Description)),
    ),
  );
  const submit = can('JobDefinition', partitionOf(fullKey), 'Submit')
    ? [
        h('h2', {}, 'Submit'),
        parameterForm({
          params: d.Parameters,
          submitLabel: 'Submit',
          onSubmit: async (body) => {
            /** @type {Job} */
            const job = await api('POST', `/Job/${encodeURIComponent(fullKey)}`, body);
            navigate(`/job/${job.jobId}`);
          },
        }),
      ]
    : h('p', { class: 'muted' }, 'You may not submit this definition.');
  fill(
    main,
    h('h1', {}, fullKey, ' ', h('span', { class: 'muted' }, text(d.JobDefinitionType))),
    h('p', { class: 'desc', id: 'definition-description' }, text(d.Description)),
    h('p', {}, h('a', { href: `#/jobs?JobDefinition=${encodeURIComponent(fullKey)}` }, 'Jobs of this definition')),
    runtimeSection(fullKey),
    h('h2', {}, 'Parameters'),
    h(
      'table',
      { class: 'params' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Name', 'Direction', 'Type', 'Default', '', 'Description'].map((c) => h('th', {}, c)),
        ),
      ),
      h('tbody', {}, params),
    ),
    d.Script ? [h('h2', {}, 'Script'), h('pre', { class: 'script' }, d.Script)] : null,
    requestSection(d),
    submit,
  );
}

/**
 * An HTTP definition's request (method, URL, headers, body) or a SQL definition's database and script, as text;
 * credentials by name only (their passwords never reach the dashboard).
 * @param {JobDefinition} d
 */
function requestSection(d) {
  if (d.Http) {
    const r = d.Http;
    const lines = [
      `${r.Method} ${r.Url}`,
      ...Object.entries(r.Headers ?? {}).map(([name, value]) => `${name}: ${value}`),
    ];
    if (r.Body) lines.push('', r.Body);
    const how = [
      `Expect ${r.ExpectStatus ?? '200-299'}`,
      `timeout ${r.TimeoutSeconds ?? 60} s`,
      r.FollowRedirects === false ? 'no redirects' : 'follows redirects',
      r.Credential ? `credential ${r.Credential}` : 'no credential',
    ];
    return [
      h('h2', {}, 'Request'),
      h('pre', { class: 'script', id: 'definition-request' }, lines.join('\n')),
      h('p', { class: 'muted small' }, how.join(' · ')),
    ];
  }
  if (d.Sql) {
    const s = d.Sql;
    return [
      h('h2', {}, 'SQL'),
      h(
        'p',
        { class: 'muted small' },
        `${s.Database} · credential ${text(s.Credential)} · ${s.Transaction === false ? 'no transaction' : 'one transaction'}`,
      ),
      h('pre', { class: 'script', id: 'definition-sql' }, s.Script),
    ];
  }
  return null;
}
