/**
 * The shapes of the server's JSON answers the console reads, for the type check (tsconfig.console.json): JSDoc
 * typedefs only, no code. A module names the ones it uses with `@import` in a JSDoc comment; api.js hands each
 * answer over typed as the typedef its caller names. Only the fields the console reads are listed (the server sends
 * more); a field the server may leave unset is `| null`, as the JSON interface renders it (docs/architecture.md §12).
 */

// ---- The dashboard's own answers (`ui/api/…`)

/**
 * @typedef {object} Grant  a role's grant: a type (or `*`), a partition (or `*`) and the privileges it gives
 * @property {string} type
 * @property {string} partition
 * @property {string[]} privileges
 */

/**
 * @typedef {object} ActionButton  a job action the dashboard offers as a button (the server's action table)
 * @property {string} name
 * @property {string} label
 * @property {boolean} [confirm]
 * @property {{ type: string, privilege: string }[]} privileges
 * @property {'properties' | 'submit' | 'completion' | 'comment'} body
 * @property {boolean} creates
 */

/**
 * @typedef {object} BulkAnswer  `POST /Job/bulk/<action>`: what was done (a dry run: what would be)
 * @property {number} Matched
 * @property {number} Done
 * @property {{ Job: number, Reason: string }[]} Skipped
 * @property {boolean} DryRun
 */

/**
 * @typedef {object} Session  `GET`/`POST ui/api/session`: who is signed in and what they may do
 * @property {string} user
 * @property {string[]} roles
 * @property {string} csrf
 * @property {string} jsonBase
 * @property {number} serverTime
 * @property {Grant[]} grants
 * @property {Record<string, string[]>} actions  the statuses each job action applies in
 * @property {ActionButton[]} actionButtons
 * @property {string[]} finalStatuses
 * @property {string[]} [modifiableStatuses]  where PATCH /Job/<id> applies: the job has not started
 */

/**
 * @typedef {object} SignInOptions  `GET ui/api/signin-options`: what the sign-in page offers
 * @property {boolean} passwords  false when users' passwords are refused (single sign-on only)
 * @property {{ label: string, url: string } | null} sso  the identity provider's sign-in, when configured
 */

/**
 * @typedef {object} QueueLoad
 * @property {string} key
 * @property {string | null} Description
 * @property {boolean} Held
 * @property {number | null} limit
 * @property {number} running
 */

/**
 * @typedef {object} ProcessServerLoad
 * @property {string} key
 * @property {string | null} Description
 * @property {string | null} Status
 * @property {string | null} DesiredStatus
 * @property {number | null} limit
 * @property {number} running
 * @property {boolean} agentConnected
 */

/** @typedef {{ queues: QueueLoad[], processServers: ProcessServerLoad[] }} Load  `GET ui/api/load` */

/**
 * @typedef {{ kind: 'string', maxLength: number, pattern?: string, patternText?: string }
 *   | { kind: 'text' | 'secret' | 'scalar', maxLength: number }
 *   | { kind: 'number', integer: boolean, min?: number, max?: number }
 *   | { kind: 'boolean' | 'date' | 'timezone' }
 *   | { kind: 'enum', values: string[] }
 *   | { kind: 'reference', type: string }
 *   | { kind: 'record', fields: FieldDescription[] }
 *   | { kind: 'list', of: FieldKind, maxItems: number }
 *   | { kind: 'map', maxEntries: number, keyPatternText: string }} FieldKind  a field's kind, as the registry declares it
 */

/**
 * @typedef {object} FieldDescription  a field of the registry's declaration of a type
 * @property {string} name
 * @property {FieldKind} kind
 * @property {boolean} [required]
 * @property {boolean} [readOnly]
 * @property {boolean} [derived]
 * @property {unknown} [default]
 * @property {string} [description]
 */

/**
 * @typedef {object} TypeDescription  a definition type as the registry declares it (`GET ui/api/types`)
 * @property {string} name
 * @property {string} description
 * @property {'partitioned' | 'name' | 'queueProvider'} key
 * @property {string[]} identity  the fields that make its key, in the key's order
 * @property {string[]} privileges
 * @property {FieldDescription[]} fields
 */

/** @typedef {Record<string, unknown>} DefinitionObject  a definition as `GET /<Type>/<key>` renders it */

// ---- The JSON interface

/**
 * @template T
 * @typedef {{ items: T[], next?: string | null }} Page  a list answer, `next` the cursor of the next page
 */

/** @typedef {{ code?: string, message?: string }} ErrorRecord  the interface's error answer */

/**
 * @typedef {object} UserAccount  `GET /User/<name>` (never the password)
 * @property {string} Name
 * @property {string[]} Roles
 * @property {boolean} Disabled
 * @property {boolean} PasswordSet
 * @property {string} CreationTime
 */

/** @typedef {{ Name: string, Description: string, BuiltIn: boolean, Grants: string[] }} RoleItem  `GET /Role` */

/**
 * @typedef {object} ApiKeyItem  an item of `GET /User/<name>/apikeys` (never the key)
 * @property {string} Id
 * @property {string} Description
 * @property {string} Created
 * @property {string} Expires
 * @property {string | null} LastUsed
 */

/** @typedef {{ Id: string, Key: string, Expires: string }} NewApiKey  `POST /User/<name>/apikeys`, the key shown once */

/**
 * @typedef {object} JobParameter
 * @property {string} Name
 * @property {string} Direction
 * @property {string} [DataType]
 * @property {string | number | null} [InValueString]
 * @property {string | number | null} [InValueNumber]
 * @property {string | number | null} [InValueDate]
 * @property {string | number | null} [OutValueString]
 * @property {string | number | null} [OutValueNumber]
 * @property {string | number | null} [OutValueDate]
 */

/**
 * @typedef {object} JobFile
 * @property {number} uniqueId
 * @property {string} Name
 * @property {number | null} [Size]
 */

/**
 * @typedef {object} Job  `GET /Job/<id>`, or the fields a list asks for (`?fields=`)
 * @property {number} jobId
 * @property {string} JobDefinition
 * @property {string} Status
 * @property {string | null} [Description]
 * @property {string | null} [Queue]
 * @property {string | null} [ProcessServer]
 * @property {number | null} [Priority]
 * @property {number | null} [ReturnCode]
 * @property {string | null} [SubmittedBy]
 * @property {string | null} [CreationTime]
 * @property {string | null} [RequestedStartTime]
 * @property {string | null} [ScheduledStartTime]
 * @property {string | null} [RunStart]
 * @property {string | null} [RunEnd]
 * @property {number | null} [JobGroup]
 * @property {number | null} [ParentJob]
 * @property {JobParameter[]} [JobParameters]
 * @property {string[]} [JobNotes]
 * @property {JobFile[]} [JobFiles]
 * @property {number | null} [OperatorMessage]
 * @property {number | null} [UserMessage]
 */

/**
 * @typedef {object} HistoryEntry  one status change of `GET /Job/<id>/history`
 * @property {string} Time
 * @property {string | null} FromStatus
 * @property {string} ToStatus
 * @property {string | null} User
 * @property {string | null} Cause
 * @property {string | null} Detail
 */

/**
 * @typedef {object} WaitReason  why a job waits, in the server's words
 * @property {string} Code
 * @property {string} Message
 * @property {string | null} Object  `Type:key` of what it waits on
 * @property {string | null} Until
 */

/** @typedef {{ Status?: string, Reasons?: WaitReason[] }} Waiting  `GET /Job/<id>/waiting` */
/** @typedef {{ Job: number, Reasons?: WaitReason[] }} WaitingItem  an item of `GET /waiting?Jobs=…` */

/**
 * @typedef {object} DefinitionParameter
 * @property {string} Name
 * @property {string} [Direction]
 * @property {string} [DataType]
 * @property {string | number | null} [DefaultValue]
 * @property {boolean} [Optional]
 * @property {string | null} [Description]
 * @property {number | null} [DisplayOrder]
 */

/**
 * @typedef {object} JobDefinition  `GET /JobDefinition/<key>`, or the fields a list asks for
 * @property {string} Partition
 * @property {string} Name
 * @property {string | null} [JobDefinitionType]
 * @property {string | null} [Description]
 * @property {string | null} [Script]
 * @property {HttpRequest | null} [Http]
 * @property {SqlScript | null} [Sql]
 * @property {DefinitionParameter[] | null} [Parameters]
 */

/**
 * @typedef {object} HttpRequest  an HTTP definition's request
 * @property {string} Method
 * @property {string} Url
 * @property {Record<string, string> | null} [Headers]  header names and values
 * @property {string | null} [Body]
 * @property {string | null} [Credential]
 * @property {string} [ExpectStatus]
 * @property {number} [TimeoutSeconds]
 * @property {boolean} [FollowRedirects]
 */

/**
 * @typedef {object} SqlScript  a SQL definition's database and statements
 * @property {string | null} [Credential]
 * @property {string} Database
 * @property {string} Script
 * @property {boolean} [Transaction]
 */

/**
 * @typedef {{ Partition: string, Name: string, TimeZone?: string | null, Elements?: Record<string, unknown>[] }
 *   & Record<string, unknown>} TimeWindow  `GET /TimeWindow/<key>`: every field is shown, so all are kept
 */

/**
 * @typedef {{ Partition: string, Name: string, FileEvents?: Record<string, unknown>[] | null }
 *   & Record<string, unknown>} EventDefinition  `GET /EventDefinition/<key>`: every field is shown, so all are kept
 */

/**
 * @typedef {object} FileWatch  a watch of `GET /ProcessServer/<key>/filewatches`
 * @property {string} EventDefinition
 * @property {string} Directory
 * @property {string} Pattern
 * @property {string | null} LastPoll
 * @property {number} FilesSeen
 * @property {string | null} LastError
 */

/** @typedef {{ From: string, Until: string }} Opening  an open period of `GET /TimeWindow/<key>/openings` */

/**
 * @typedef {object} ForecastEntry  a planned start of `GET /forecast`
 * @property {string} Start
 * @property {string} JobDefinition
 * @property {'Recurrence' | 'Scheduled'} Source
 * @property {number | null} [Job]
 * @property {string} Queue
 * @property {string | null} [TimeWindow]
 */

/**
 * @typedef {object} OperatorMessage
 * @property {number} uniqueId
 * @property {string | null} [FullText]
 * @property {string | null} [SenderObject]
 * @property {string | null} [CreationTime]
 * @property {string | null} [ReplyExpression]
 * @property {string | null} [ReplyStatus]
 * @property {string | null} [Reply]
 * @property {string | null} [ReplyUser]
 * @property {string | null} [ReplyTime]
 */

/**
 * @typedef {object} UserMessage
 * @property {number} uniqueId
 * @property {string | null} [Text]
 * @property {string | null} [Status]
 * @property {string | null} [Response]
 * @property {{ Response: string }[] | null} [Responses]
 * @property {number | null} [Job]
 * @property {string | null} [CreationTime]
 * @property {string[] | null} [Participants]
 * @property {{ Delegate: string | null, For: string | null }[] | null} [Delegates]
 * @property {HandOverEntry[] | null} [History]
 */

/**
 * @typedef {object} HandOverEntry  a forward or delegation in a user message's History
 * @property {string | null} Time
 * @property {string | null} User
 * @property {'Forward' | 'Delegate' | null} Action
 * @property {string[] | null} To
 * @property {string | null} Comment
 */

/**
 * @typedef {object} MillraceEvent  `GET /Event/<eventId>`, an item of `GET /Event`
 * @property {string} eventId
 * @property {string} Status
 * @property {number} RaiseSequence
 * @property {string | null} [RaiseTime]
 * @property {string | null} [RaiserObject]
 * @property {string | null} [RaiserComment]
 * @property {string | null} [ClearTime]
 * @property {string | null} [ClearerObject]
 */

/**
 * @typedef {object} Alert
 * @property {number} uniqueId
 * @property {string | null} [Message]
 * @property {string | null} [Status]
 * @property {string | null} [SourceObject]
 * @property {string | null} [CreationTime]
 */

// ---- The live feed (`GET {base}/stream`)

/**
 * @typedef {object} JobEventData  a `job` event: a job's status change
 * @property {number} jobId
 * @property {number | null} parentJob
 * @property {string | null} from
 * @property {string} to
 */

/**
 * @typedef {{ type: 'job', id: string, data: JobEventData }
 *   | { type: 'operator-message' | 'user-message' | 'alert' | 'process-server', id: string,
 *       data: Record<string, unknown> }} FeedEvent
 */

export {};
