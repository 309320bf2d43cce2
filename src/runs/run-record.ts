// What a run is in memory: its record (the columns of workflow_runs, run-columns.ts) and its
// document (run_json), the two forms in which the document is written out, and the questions
// every reader of a run asks. The changes of a run are run-state.ts.
import type { Decision, Rule, TemplatePage } from '../templates/definition/definition-types.js';
import type { Actor } from '../audit/actor.js';
import type { RunEvent } from './run-events.js';
import { isOpen, type RunStatus, type StepStatus } from './run-status.js';

export interface StepState {
  name: string;
  status: StepStatus;
  assignee: string | null;
  due_date: string | null;
  started_at: string | null;
  completed_at: string | null;
  /** Set once the step was still current at its due date (absent in older documents). */
  overdue?: boolean;
  /** When the run passed over the step (status skipped): the rules hid its page. */
  skipped_at?: string;
  /**
   * The rules (by index in the template's rules) that decided the step, when any did: which
   * showed or hid its page, set its due time, chose its assignee. Absent for a step no rule
   * decided, as in every run of a template without rules.
   */
  rules?: StepRules;
  // What people did and may do (absent where nothing was: a plain run's steps are unchanged).
  /** Who may claim the step, resolved when it began (its page's candidates, then escalations). */
  candidate_users?: string[];
  candidate_groups?: string[];
  /** The user the client named as having done it (complete-workflow-step's completed_by). */
  completed_by?: string;
  /** An approval step's decision, its comment, and the user who decided (none: a timeout). */
  decision?: Decision;
  comment?: string;
  decided_by?: string;
  /** When an approval step decides by itself (its page's decisionTimeout), this visit. */
  decision_due_at?: string;
  /** How often the approval step was rejected, over every visit (maxRejections counts these). */
  rejections?: number;
  /** How many of its page's escalations this visit of the step has had. */
  escalated?: number;
  /** When a rejection last sent the run back to (or past) this step. */
  reopened_at?: string;
}

/** The rules that decided a step (each an index into the template's rules). */
export interface StepRules {
  shown_by?: number;
  hidden_by?: number;
  /** Hidden because a show_page rule names the page and none fired: the last such rule. */
  not_shown_by?: number;
  due_by?: number;
  assigned_by?: number;
}

export type RunCommand =
  | { seq: number; type: 'start'; requested_at: string }
  | {
      seq: number;
      type: 'complete_step';
      step: number;
      input_fields: Record<string, string>;
      requested_at: string;
      /** Who asked for it: the actor of the events its applying makes (absent in older ones). */
      requested_by?: Actor;
      /** The user the client names as having done the step. */
      completed_by?: string;
      /** An approval step's decision and comment. */
      decision?: Decision;
      comment?: string;
      /** The decision is the page's decisionTimeout's, applied by the service. */
      timed_out?: boolean;
    };

/**
 * run_json as clients see it: everything needed to show a run without reading its template.
 * MySQL keeps it without the template's pages (storedDocumentJson), which reads restore.
 */
export interface RunDocument {
  /** The template version the run uses, with that version's pages and rules (when it has any). */
  template: RunTemplate;
  input_fields: Record<string, string>;
  user_assignments: Record<string, string>;
  steps: StepState[];
  current_step: number | null;
  pending: RunCommand | null;
  error: { message: string; at: string } | null;
  /** The run's labels (run-labels.ts); absent when it was created without any. */
  labels?: Record<string, string>;
  /**
   * The organization's time zone when the run was created, in which due times in days are
   * counted: present only when its template has relative due times (a page's `due`, a rule's
   * set_due), so a run of any other template is stored as before.
   */
  time_zone?: string;
  /**
   * The schedule that created the run, and the scheduled time it was created for (absent for a
   * run created by a request).
   */
  schedule?: { id: string; scheduled_for: string };
}

/** What a run's document holds of its template version: what it needs to run and be shown. */
export interface RunTemplate {
  id: string;
  name: string;
  version: number;
  pages: TemplatePage[];
  rules?: Rule[];
}

export interface RunRecord {
  id: string;
  organizationId: string;
  templateId: string;
  templateVersion: number;
  workflowName: string;
  status: RunStatus;
  currentStepIndex: number | null;
  currentStepName: string | null;
  currentStepAssignee: string | null;
  currentStepDueDate: Date | null;
  currentStepOverdue: boolean;
  /** When the current step began: the inbox's order (src/tasks/). */
  currentStepStartedAt: Date | null;
  /**
   * The next time the current step has something owed by the clock: becoming overdue, an
   * escalation, an approval's timeout. Null when nothing is (and for a run not active).
   */
  currentStepWakeAt: Date | null;
  document: RunDocument;
  requestedSeq: number;
  appliedSeq: number;
  pendingSince: Date | null;
  lastActivity: Date;
  createdAt: Date;
  /** The seq of the run's latest event. */
  eventSeq: number;
  /**
   * The events of the change that made this record, not yet stored; empty for a record read
   * from MySQL. Whoever stores the record stores these with it.
   */
  events: RunEvent[];
}

/** True when the run holds a change no worker has applied yet. */
export function hasPendingChange(run: RunRecord): boolean {
  return isOpen(run.status) && run.requestedSeq > run.appliedSeq;
}

/** A document's stored JSON, made once per document (a document never changes in place). */
const storedJson = new WeakMap<RunDocument, string>();
/**
 * Each template version's pages (and rules) as JSON, made once per pages array: versions never
 * change, and a version's rules are read with its pages.
 */
const pagesJson = new WeakMap<TemplatePage[], string>();

/**
 * The document as stored: its template by id, name and version only. The pages are the
 * template version's, which never changes, so a row need not carry a copy of them (half of a document's bytes,
 * read and written again by every change); RunStore puts them back when it reads a run.
 */
export function storedDocumentJson(document: RunDocument): string {
  let json = storedJson.get(document);
  if (json === undefined) {
    const { template, ...rest } = document;
    const { id, name, version } = template;
    // The rules, like the pages, are the template version's: not stored with each run.
    json = JSON.stringify({ template: { id, name, version }, ...rest });
    storedJson.set(document, json);
  }
  return json;
}

/**
 * The document as clients see it (run_json, with its template's pages): the stored JSON with
 * the pages' JSON (made once per template) spliced into its template object, so a create
 * serializes its document once for both the INSERT and the answer.
 */
export function documentJson(document: RunDocument): string {
  const stored = storedDocumentJson(document);
  const pages = document.template.pages;
  let json = pagesJson.get(pages);
  if (json === undefined) {
    const { rules } = document.template;
    json = JSON.stringify(pages) + (rules ? `,"rules":${JSON.stringify(rules)}` : '');
    pagesJson.set(pages, json);
  }
  // The stored JSON starts with {"template":{"id":…,"name":…,"version":…}: the pages (and
  // rules) go before that brace, last, as the document holds them.
  const { id, name, version } = document.template;
  const end =
    '{"template":{"id":,"name":,"version":'.length +
    JSON.stringify(id).length +
    JSON.stringify(name).length +
    String(version).length;
  return `${stored.slice(0, end)},"pages":${json}${stored.slice(end)}`;
}

/** A run that cannot be applied however often it is retried (a broken record). */
export class RunStateError extends Error {}
