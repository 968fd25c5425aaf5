/**
 * A submit form built from a definition's parameters: one field per In parameter with its type, default and
 * whether it is mandatory. Values are checked here first (a clear message and no request at all), and the
 * server checks again; its message is shown the same way.
 */
import { h } from './dom.js';
import { errorText } from './format.js';
/** @import { DefinitionParameter } from './api-types.js' */
/** @typedef {{ Name: string, InValueString: string }} ParameterValue */
/**
 * What the form hands to `onSubmit`: a submit body of the JSON interface.
 * @typedef {{ JobParameters: ParameterValue[], Description?: string, Queue?: string, HoldOnSubmit?: boolean,
 *   MaxRunTime?: number }}
 *   SubmitBody
 */

/** MaxRunTime: whole seconds up to a year (docs/architecture.md §6b). */
const MAX_RUN_TIME = 31_536_000;
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const DATE =
  /^(\d{4}\/\d{2}\/\d{2} \d{2}:\d{2}(:\d{2}(,\d{1,3})?)?( \S+)?|\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?(\[\S+\])?)$/;

/**
 * `params`: the definition's Parameters; `values`: starting values by name (a resubmitted job's In values).
 * `onSubmit(body)` gets `{JobParameters, Description?, Queue?, HoldOnSubmit?, MaxRunTime?}` and may throw an error to show.
 * `extra`: whether the form also asks for a description, a queue and holding on submit.
 * Longer than 100 lines, kept whole: its inputs, the checks on submit and the answer share the `inputs` list and the
 * form's elements, and split apart each piece would take them all as parameters.
 * @param {{ params: DefinitionParameter[] | null | undefined, values?: Record<string, string | number>,
 *   submitLabel: string, onSubmit: (body: SubmitBody) => Promise<void>, extra?: boolean }} options
 */
export function parameterForm({ params, values = {}, submitLabel, onSubmit, extra = true }) {
  /** @type {{ p: DefinitionParameter, input: HTMLInputElement, mandatory: boolean }[]} */
  const inputs = [];
  const error = h('p', { class: 'error', role: 'alert', id: 'form-error' });
  const fields = h('div', { class: 'fields' });
  const ins = (params ?? []).filter((p) => p.Direction !== 'Out');
  ins.sort((a, b) => (a.DisplayOrder ?? 1e9) - (b.DisplayOrder ?? 1e9));
  for (const p of ins) {
    const mandatory = p.Optional === false && (p.DefaultValue === null || p.DefaultValue === undefined);
    const id = `p-${p.Name}`;
    const start = values[p.Name] ?? p.DefaultValue ?? '';
    const input = h('input', {
      id,
      name: p.Name,
      value: String(start),
      'data-type': p.DataType ?? 'String',
      placeholder: p.DataType === 'Date' ? '2026/11/23 08:00:00,000 Europe/Amsterdam or ISO-8601' : (p.DataType ?? ''),
      inputmode: p.DataType === 'Number' ? 'decimal' : undefined,
    });
    inputs.push({ p, input, mandatory });
    fields.append(
      h('label', { for: id }, p.Name, mandatory ? h('span', { class: 'req', title: 'mandatory' }, ' *') : null),
      h(
        'div',
        {},
        input,
        h('span', { class: 'muted small' }, ` ${p.DataType ?? 'String'}`),
        p.Description ? h('div', { class: 'muted small pdesc' }, p.Description) : null,
      ),
    );
  }
  const description = h('input', { id: 'submit-description', name: 'Description', maxlength: 255 });
  const queue = h('input', { id: 'submit-queue', name: 'Queue', placeholder: 'default queue' });
  const hold = h('input', { id: 'submit-hold', type: 'checkbox', name: 'HoldOnSubmit' });
  const maxRun = h('input', {
    id: 'submit-maxruntime',
    name: 'MaxRunTime',
    inputmode: 'numeric',
    placeholder: "the definition's limit",
  });
  if (extra)
    fields.append(
      h('label', { for: 'submit-description' }, 'Description'),
      description,
      h('label', { for: 'submit-queue' }, 'Queue'),
      queue,
      h('label', { for: 'submit-hold' }, 'Hold on submit'),
      h('div', {}, hold),
      h('label', { for: 'submit-maxruntime' }, 'Max run time (s)'),
      maxRun,
    );
  const button = h('button', { type: 'submit', id: 'submit-button' }, submitLabel);
  const form = h('form', { class: 'param-form', novalidate: true }, fields, h('div', {}, button), error);

  function check() {
    /** @type {[HTMLInputElement, string][]} */
    const problems = [];
    /** @type {ParameterValue[]} */
    const JobParameters = [];
    for (const { p, input, mandatory } of inputs) {
      const v = input.value.trim();
      input.classList.remove('invalid');
      if (v === '') {
        if (mandatory) problems.push([input, `${p.Name} is mandatory.`]);
        continue;
      }
      if (p.DataType === 'Number' && !NUMBER.test(v)) problems.push([input, `${p.Name} must be a number, not "${v}".`]);
      else if (p.DataType === 'Date' && !DATE.test(v))
        problems.push([
          input,
          `${p.Name} must be a date such as 2026/11/23 08:00:00,000 UTC or 2026-11-23T08:00:00Z, not "${v}".`,
        ]);
      else JobParameters.push({ Name: p.Name, InValueString: v });
    }
    const limit = extra ? maxRun.value.trim() : '';
    maxRun.classList.remove('invalid');
    if (limit !== '' && !(/^\d+$/.test(limit) && Number(limit) >= 1 && Number(limit) <= MAX_RUN_TIME))
      problems.push([maxRun, `Max run time must be whole seconds from 1 to ${MAX_RUN_TIME}, not "${limit}".`]);
    for (const [input] of problems) input.classList.add('invalid');
    return { problems: problems.map(([, m]) => m), JobParameters, limit };
  }

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    error.textContent = '';
    const { problems, JobParameters, limit } = check();
    if (problems.length > 0) {
      error.textContent = problems.join(' ');
      return;
    }
    /** @type {SubmitBody} */
    const body = { JobParameters };
    if (extra) {
      if (description.value.trim()) body.Description = description.value.trim();
      if (queue.value.trim()) body.Queue = queue.value.trim();
      if (hold.checked) body.HoldOnSubmit = true;
      if (limit !== '') body.MaxRunTime = Number(limit);
    }
    button.disabled = true;
    try {
      await onSubmit(body);
    } catch (err) {
      error.textContent = errorText(err);
    } finally {
      button.disabled = false;
    }
  });
  return form;
}
