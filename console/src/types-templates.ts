// The template endpoints' shapes as the templates screens read them (the API document's
// WorkflowTemplate, WorkflowTemplateDetail and WorkflowTemplateVersion), and a template's
// definition: typed fields, due times and rules.

/** Who saved a version: an API key (its id, and its name when it has one), or the service. */
export type Actor =
  { type: 'api_key'; id: string; name?: string } | { type: 'system' } | { type: 'admin_cli' };

// A template's definition is the API's own vocabulary (no imports, nothing but types and the
// lists of names), shared rather than written out again.
export {
  CONDITION_OPS,
  FIELD_TYPES,
  ORDERED_TYPES,
  TEXT_TYPES,
} from '../../src/templates/definition/definition-types.js';
export type {
  Condition,
  ConditionOp,
  DueAnchor,
  DueSpec,
  DueUnit,
  FieldType,
  Rule,
  RuleAction,
  TemplateInputField as TemplateField,
  TemplatePage,
  When,
} from '../../src/templates/definition/definition-types.js';
import type {
  DueAnchor,
  DueUnit,
  Rule,
  RuleAction,
  TemplateInputField as TemplateField,
  TemplatePage,
  When,
} from '../../src/templates/definition/definition-types.js';

/** A list item of GET /get-workflow-templates: the latest version's fields, flattened. */
export interface TemplateListItem {
  id: string;
  name: string;
  inputFields: Array<{ pageName: string; inputId: string; fieldName: string }>;
}

/** GET /get-workflow-template (and the answer of every template write): one version in full. */
export interface TemplateDetail {
  id: string;
  version: number;
  latestVersion: number;
  archived: boolean;
  name: string;
  pages: TemplatePage[];
  /** Absent when the version has none. */
  rules?: Rule[];
  createdAt: string;
  updatedAt: string;
  versionCreatedAt: string;
  versionCreatedBy?: Actor;
}

/** A list item of GET /get-workflow-template-versions. */
export interface TemplateVersion {
  version: number;
  name: string;
  createdAt: string;
  createdBy?: Actor;
  pageCount: number;
  fieldCount: number;
}

/**
 * A number as the editor sends it: a number when the text typed is one; otherwise the text as
 * typed, which the API refuses naming the input.
 */
export type Typed = number | string;

/** A field as the editor sends it (its numbers as typed). */
export type DraftFieldBody = Omit<TemplateField, 'min' | 'max' | 'minLength' | 'maxLength'> & {
  min?: Typed;
  max?: Typed;
  minLength?: Typed;
  maxLength?: Typed;
};

/** A due time as the editor sends it; an unset anchor or unit is sent empty, for the API to name. */
export interface DueBody {
  anchor: DueAnchor | '';
  field?: string;
  amount: Typed;
  unit: DueUnit | '';
}

export interface ActionBody {
  action: RuleAction['action'];
  page: string;
  due?: DueBody;
  user?: string;
  fromField?: string;
}

export interface RuleBody {
  name?: string;
  when: When;
  then: ActionBody[];
}

/** A template definition, the body of create-workflow-template (pages and rules also of update). */
export interface TemplateDefinition {
  name: string;
  pages: Array<{
    name: string;
    dueInHours?: Typed;
    due?: DueBody;
    inputFields: DraftFieldBody[];
  }>;
  rules?: RuleBody[];
}

/** An actor in words. */
export function actorName(actor: Actor | undefined): string {
  if (!actor) return 'not recorded';
  if (actor.type === 'api_key') return actor.name ?? `key ${actor.id.slice(0, 8)}`;
  return actor.type === 'system' ? 'the service' : 'admin CLI';
}
