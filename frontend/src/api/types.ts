/** Names the screens use for API shapes; the only place that knows the generated schema's component names. */
import type { components } from './schema';

type Schemas = components['schemas'];
export type User = Schemas['User'];
/** Who is signed in (`/auth/me`, and `user` in a login response). */
export type Identity = Schemas['Identity'];
export type Role = Identity['role'];
/** `/auth/me`: the identity plus where it came from (`identity` is null for local accounts). */
export type Me = Schemas['Me'];
/** Who the session holds: a login answer's `user`, or `/auth/me` — whose `role` is null for a
 * project-scoped API token (a script's credential: it acts in `scope.project` only). */
export type SignedIn = Identity | Me;
export type AuthProvider = Schemas['Provider'];
export type Persona = Schemas['Persona'];
export type Schedule = Schemas['Schedule'];
export type ScheduleCreate = Schemas['ScheduleCreate'];
export type ScheduleUpdate = Schemas['ScheduleUpdate'];
/** One entry of a schedule's version history: who, when, and `{field: [before, after]}`. */
export type ScheduleVersion = Schemas['ScheduleVersion'];
export type Job = Schemas['Job'];
/** Jobs created together with a callback (`GET /batches/{id}`): counts per status and `state`. */
export type Batch = Schemas['Batch'];
export type BatchState = Batch['state'];
export type JobDetail = Schemas['JobDetail'];
export type JobStatus = Job['status'];
export type JobCreate = Schemas['JobCreate'];
export type Attempt = Schemas['Attempt'];
export type Handler = Schemas['Handler'];
export type CronDescription = Schemas['CronDescription'];
export type Stats = Schemas['Stats'];
export type StatsWindows = Schemas['StatsWindows'];
export type WindowCounts = Schemas['WindowCounts'];
export type Leader = Schemas['Leader'];
export type Worker = Schemas['Worker'];
export type AuditEvent = Schemas['AuditEvent'];
export type AuditVerify = Schemas['AuditVerify'];
export type ChaosExperiment = Schemas['ChaosExperiment'];
export type ChaosCreate = Schemas['ChaosCreate'];
export type UserCreate = Schemas['UserCreate'];
/** An API token as listed (`GET /tokens`); `ApiTokenCreated` adds the secret, shown once. */
export type ApiToken = Schemas['Token'];
export type ApiTokenCreated = Schemas['CreatedToken'];
export type ApiTokenCreate = Schemas['TokenCreate'];
export type PasswordChange = Schemas['PasswordChange'];
export type Project = Schemas['Project'];
export type ProjectMember = Schemas['Member'];
export type Quotas = Schemas['Quotas'];
export type Queue = Schemas['Queue'];
export type QueueUpdate = Schemas['QueueUpdate'];
export type NotificationChannel = Schemas['ChannelWithHealth'];
export type ChannelHealth = Schemas['ChannelHealth'];
export type NotificationChannelWithHealth = Schemas['ChannelWithHealth'];
export type FailingChannel = Schemas['FailingChannel'];
export type NotificationChannelCreated = Schemas['ChannelCreated'];
export type NotificationChannelCreate = Schemas['ChannelCreate'];
export type NotificationDelivery = Schemas['Delivery'];
export type ScheduleAlerts = Schemas['Alerts'];
export type ScheduleHealthInfo = Schemas['Health'];
export type HealthState = ScheduleHealthInfo['state'];

/** WAITING first: a job waits for its dependencies before it is PENDING. */
const LIFECYCLE = ['WAITING', 'PENDING', 'RUNNING', 'SUCCEEDED', 'DEAD', 'CANCELLED'] as const satisfies readonly JobStatus[];
// Does not compile when the API gains a status the list lacks (the order is the console's own).
const everyJobStatus: Exclude<JobStatus, (typeof LIFECYCLE)[number]> extends never ? true : false = true;
void everyJobStatus;
export const JOB_STATUSES: JobStatus[] = [...LIFECYCLE];
export const ROLES: Role[] = ['VIEWER', 'OPERATOR', 'ADMIN'];
export type QueueHistory = Schemas['QueueHistory'];
export type QueueSample = Schemas['QueueSample'];
