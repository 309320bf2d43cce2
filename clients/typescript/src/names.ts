// Names for the document's enumerations, taken from the generated types (so they follow the
// document): what a caller writes in a signature or a select.
import type {
  ApiKey,
  AuditEntry,
  CreateWorkflowTemplateRequest,
  WebhookDelivery,
  WebhookPayload,
  WorkflowRun,
  WorkflowRunDetail,
} from './generated/types.gen.js';

/** What an API key may do. */
export type Scope = ApiKey['scopes'][number];
/** A run's status. */
export type RunStatus = WorkflowRun['status'];
/** A step's status. */
export type StepStatus = WorkflowRunDetail['steps'][number]['status'];
/** The type of a run event (history, webhooks, the live stream). */
export type RunEventType = WebhookPayload['type'];
/** The type of an input field. */
export type FieldType = NonNullable<
  CreateWorkflowTemplateRequest['pages'][number]['inputFields'][number]['type']
>;
/** The type of an audit log entry. */
export type AuditEntryType = AuditEntry['type'];
/** A webhook delivery's status. */
export type DeliveryStatus = WebhookDelivery['status'];
/** Who made a change. */
export type Actor = NonNullable<WorkflowRunDetail['history'][number]['actor']>;
