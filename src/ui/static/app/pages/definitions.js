/**
 * Definitions: browse and search those of any type (`GET {base}/<Type>?Search=…`, paged by cursor), open a job
 * definition, and submit it with a form built from its parameters; its edit, copy, delete and export buttons
 * (definition-actions.js) lead to the forms of pages/definition-edit.js.
 */
import { api, withQuery } from '../api.js';
import { definitionActions, viewPath } from '../definition-actions.js';
import { typeDescriptions } from '../definition-types.js';
import { fill, h, notice } from '../dom.js';
import { errorText, text } from '../format.js';
import { parameterForm } from '../param-form.js';
import { runtimeSection } from '../runtime-chart.js';
import { navigate } from '../router.js';
import { can, canSomewhere, partitionOf } from '../session.js';
/** @import { Job, JobDefinition, Page, TypeDescription } from '../api-types.js' */

/**
 * The objects of one definition type (`?type=`, JobDefinition by default), searched by name or description; a user
 * who may create one gets a "New" button.
 * @param {HTMLElement} main
 * @param {Record<string, string>} _params
 * @param {Record<string, string>} query
 */
export async function renderDefinitions(main, _params, query) {
  const typeName = query.type || 'JobDefinition';
  const jobDefinitions = typeName === 'JobDefinition';
  /** @type {TypeDescription[]} */
  let types = [];
  try {
    types = await typeDescriptions();
  } catch (err) {
    notice(errorText(err), 'error');
  }
  const typeSelect = h(
    'select',
    { name: 'type', id: 'def-type' },
    (types.length ? types.map((t) => t.name) : [typeName]).map((n) => h('option', { value: n }, n)),
  );
  typeSelect.value = typeName;
  const search = h('input', {
    name: 'Search',
    id: 'def-search',
    placeholder: 'Search name or description',
    value: query.Search ?? '',
  });
  const form = h('form', { class: 'filters' }, typeSelect, search, h('button', { type: 'submit' }, 'Search'));
  const go = () => navigate('/definitions', { type: typeSelect.value, Search: search.value.trim() });
  typeSelect.addEventListener('change', go);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    go();
  });
  const body = h('tbody', { id: 'definitions-body' });
  const info = h('p', { class: 'muted' });
  const more = h('button', { type: 'button', hidden: true }, 'More');
  let after = '';

  async function load() {
    try {
      /** @type {Page<JobDefinition & { businessKey: string }>} */
      const res = await api(
        'GET',
        withQuery(`/${typeName}`, {
          Search: query.Search,
          Limit: 100,
          After: after,
          fields: jobDefinitions ? 'businessKey,JobDefinitionType,Description' : 'businessKey,Description',
        }),
      );
      for (const d of res.items) {
        const key = d.businessKey.slice(typeName.length + 1);
        body.append(
          h(
            'tr',
            { 'data-key': key },
            h('td', {}, h('a', { href: `#${viewPath(typeName, key)}` }, key)),
            jobDefinitions ? h('td', {}, text(d.JobDefinitionType)) : null,
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
    canSomewhere(typeName, 'Create')
      ? h('p', {}, h('a', { class: 'button', href: `#/new/${typeName}`, id: 'definition-new' }, `New ${typeName}`))
      : null,
    h(
      'table',
      { class: 'definitions' },
      h(
        'thead',
        {},
        h('tr', {}, h('th', {}, typeName), jobDefinitions ? h('th', {}, 'Type') : null, h('th', {}, 'Description')),
      ),
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
    definitionActions('JobDefinition', fullKey),
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
