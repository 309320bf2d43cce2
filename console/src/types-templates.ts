// The template endpoints' shapes as the templates screens read them (the API document's
// WorkflowTemplate, WorkflowTemplateDetail and WorkflowTemplateVersion).

/** Who saved a version: an API key (its id, and its name when it has one), or the service. */
export type Actor =
  { type: 'api_key'; id: string; name?: string } | { type: 'system' } | { type: 'admin_cli' };

export interface TemplateField {
  inputId: string;
  fieldName: string;
  required?: boolean;
}

export interface TemplatePage {
  name: string;
  dueInHours?: number;
  inputFields: TemplateField[];
}

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

/** A template definition, the body of create-workflow-template (pages also of update). */
export interface TemplateDefinition {
  name: string;
  pages: Array<{
    name: string;
    /** A number, or the text typed when it is not one (the API then names the field). */
    dueInHours?: number | string;
    inputFields: TemplateField[];
  }>;
}

/** An actor in words. */
export function actorName(actor: Actor | undefined): string {
  if (!actor) return 'not recorded';
  if (actor.type === 'api_key') return actor.name ?? `key ${actor.id.slice(0, 8)}`;
  return actor.type === 'system' ? 'the service' : 'admin CLI';
}
