import type { TypeName } from '../../../src/model/fields.ts';

/**
 * One valid object of every definition type, created in this order (later ones may refer to earlier ones),
 * with a change that PUT applies and the field that shows it. Keys are in partition GLOBAL unless stated.
 */
export interface Sample {
  type: TypeName;
  key: string;
  body: Record<string, unknown>;
  change: Record<string, unknown>;
}

export const SAMPLES: Sample[] = [
  { type: 'Partition', key: 'Finance', body: { Description: 'Finance jobs' }, change: { Comment: 'owned by FIN' } },
  {
    type: 'Application',
    key: 'Finance.Ledger',
    body: { Description: 'Ledger' },
    change: { Description: 'General ledger' },
  },
  { type: 'Lock', key: 'Finance.LedgerLock', body: {}, change: { Description: 'One ledger run at a time' } },
  {
    type: 'EventDefinition',
    key: 'Finance.LedgerClosed',
    body: { DefaultRaiseComment: 'closed' },
    change: { RequiresCommentOnRaise: true },
  },
  {
    type: 'TimeWindow',
    key: 'Finance.Weekdays',
    body: { TimeZone: 'Europe/Amsterdam', Elements: [{ FromWeekday: 'Monday', UntilWeekday: 'Friday' }] },
    change: { TimeZone: 'America/New_York' },
  },
  {
    type: 'SubmitFrame',
    key: 'Finance.Hourly',
    body: {
      Elements: [{ Kind: 'Every', Every: 1, Unit: 'Hours' }],
      EndDate: '2027/01/01 00:00:00,000 Europe/Amsterdam',
    },
    change: { SkipWhenClosed: true },
  },
  {
    type: 'Queue',
    key: 'Finance.Batch',
    body: { ExecutionSize: 4, TimeWindow: 'Finance.Weekdays' },
    change: { Held: true },
  },
  { type: 'ProcessServer', key: 'Finance.Agent1', body: { ExecutionSize: 2 }, change: { ExecutionSize: 6 } },
  { type: 'QueueProvider', key: 'Finance.Agent1.Finance.Batch', body: { ExecutionSize: 2 }, change: { Held: true } },
  {
    type: 'JobDefinition',
    key: 'Finance.PostLedger',
    body: {
      JobDefinitionType: 'BASH',
      Script: 'echo "$PERIOD"',
      Parameters: [{ Name: 'PERIOD', Direction: 'In', DataType: 'String', DefaultValue: '2026-11' }],
      DefaultQueue: 'Finance.Batch',
      Priority: 70,
      Locks: ['Finance.LedgerLock'],
      WaitEvents: [{ EventDefinition: 'Finance.LedgerClosed', ClearsEvent: true }],
      ParentApplication: 'Finance.Ledger',
    },
    change: { Priority: 80 },
  },
  {
    type: 'JobChain',
    key: 'Finance.MonthEnd',
    body: { Steps: [{ Name: 'Post', Calls: [{ JobDefinition: 'Finance.PostLedger' }] }] },
    change: { Description: 'Month-end close' },
  },
  {
    type: 'AlertEscalation',
    key: 'Finance.OnCall',
    body: { Recipients: [{ Kind: 'Email', Address: 'oncall@example.org' }] },
    change: { Description: 'Finance on-call' },
  },
  {
    type: 'ProcessServerAlertSource',
    key: 'Finance.AgentDown',
    body: { NamePattern: 'Agent*', Statuses: ['Unknown'], DefaultAlertEscalation: 'Finance.OnCall' },
    change: { Address: 'ops@example.org' },
  },
  {
    type: 'JobDefinitionAlertSource',
    key: 'Finance.LedgerFailed',
    body: { NamePattern: 'PostLedger', Statuses: [{ Status: 'Error' }] },
    change: { Description: 'Ledger failures' },
  },
  {
    type: 'Deadline',
    key: 'Finance.LedgerBy6',
    body: {
      JobDefinition: 'Finance.PostLedger',
      EndBy: '06:00',
      TimeZone: 'Europe/Amsterdam',
      TimeWindow: 'Finance.Weekdays',
      LeadMinutes: 30,
      AlertEscalation: 'Finance.OnCall',
    },
    change: { EndBy: '07:00' },
  },
  {
    type: 'Credential',
    key: 'Finance.LedgerDb',
    body: {
      Protocol: 'login',
      Endpoint: 'db.example.org',
      RealUser: 'ledger',
      Password: 's3cret!',
      VirtualUser: 'LedgerDb',
    },
    change: { Endpoint: 'db2.example.org' },
  },
  {
    type: 'ImportRuleSet',
    key: 'Finance.FromTest',
    body: { PartitionMappings: [{ From: 'TEST', To: 'Finance' }] },
    change: { Description: 'Promote from test' },
  },
  { type: 'Library', key: 'Finance.Helpers', body: { Description: 'helper jars' }, change: { Comment: 'v2' } },
];
