import { field, int, list, oneOf, record, ref, string } from '../fields.ts';
import { defineType } from '../object-type.ts';

/** Who receives an alert, how long to wait for an acknowledgement, and where to escalate next. */
const recipient = record(
  field('Kind', oneOf('Email', 'Webhook'), { default: 'Email' }),
  field('Address', string(1000), { required: true, description: 'An e-mail address, or an http(s) URL.' }),
);

export default defineType({
  name: 'AlertEscalation',
  description: 'Sends alerts to its recipients and escalates the ones not acknowledged in time.',
  key: 'partitioned',
  fields: [
    field('Recipients', list(recipient, 100), { default: [] }),
    field('AcknowledgeWithin', int(1, 31_536_000), {
      description: 'Seconds before an unacknowledged alert escalates.',
    }),
    field('EscalateTo', ref('AlertEscalation')),
  ],
  rules: (v) => {
    for (const [i, r] of (v.Recipients ?? []).entries()) {
      const address = r.Address;
      if (r.Kind === 'Webhook' && !/^https?:\/\/\S+$/.test(address))
        return `Field "Recipients[${i}].Address" must be an http or https URL for a Webhook`;
      if (r.Kind === 'Email' && !/^[^@\s]+@[^@\s]+$/.test(address))
        return `Field "Recipients[${i}].Address" must be an e-mail address`;
    }
    if (v.EscalateTo !== null && v.EscalateTo === `${v.Partition}.${v.Name}`)
      return 'Field "EscalateTo" cannot name the escalation itself';
    if (v.EscalateTo !== null && v.AcknowledgeWithin === null)
      return 'Field "AcknowledgeWithin" is required when EscalateTo is set';
    return undefined;
  },
});
