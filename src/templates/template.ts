// What a workflow template is to the service: a definition (definition/, what its author
// wrote) saved as numbered versions under a head. A version never changes once saved.
import type { Actor } from '../audit/actor.js';
import type { TemplateDefinition } from './definition/definition-types.js';

/**
 * One version of a template: what runs are made from. A version never changes once saved; a
 * change to a template is a new version under the same id.
 */
export interface Template extends TemplateDefinition {
  id: string;
  organizationId: string;
  version: number;
}

/** A version as stored: the template version, when it was saved and by whom. */
export interface TemplateVersion extends Template {
  createdAt: Date;
  /** Undefined for versions saved before actors were recorded. */
  createdBy: Actor | undefined;
}

/** A template's head: its latest version and whether it takes new runs. */
export interface TemplateHead {
  id: string;
  organizationId: string;
  latestVersion: number;
  archived: boolean;
  createdAt: Date;
  updatedAt: Date;
}
