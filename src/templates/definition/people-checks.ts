// The save-time check of what a page says about people (after its schema, definition-schema.ts):
// an approval page's rejection, limit and timeout; candidates taken from fields; escalations.
// What step-flow.ts and the approval transitions trust. Every refusal is a
// DomainError('invalid_template_field') pointing at the property at fault.
import { DomainError, pointer } from '../../errors.js';
import type { FieldType, TemplateDefinition, TemplatePage } from './definition-types.js';
import { fieldType } from './field-values.js';
import { decisionKey, indexDefinition, type DefinitionIndex } from './rules.js';

/** The types whose value names people: one (text, email, select) or several (multi_select). */
export const PEOPLE_TYPES: readonly FieldType[] = ['text', 'email', 'select', 'multi_select'];

const refuse = (message: string, ...path: Array<string | number>): never => {
  throw new DomainError('invalid_template_field', message, pointer(...path));
};

/** Checks every page's approval settings, candidates and escalations, in page order. */
export function checkPeople(definition: TemplateDefinition): void {
  const index = indexDefinition(definition);
  const inputIds = new Set(
    definition.pages.flatMap((page) => page.inputFields.map((f) => f.inputId)),
  );
  definition.pages.forEach((page, p) => {
    checkApproval(index, inputIds, page, p);
    checkCandidateField(index, page, p, 'candidateUsersFromField');
    checkCandidateField(index, page, p, 'candidateGroupsFromField');
    checkEscalations(definition, page, p);
  });
}

function checkApproval(
  index: DefinitionIndex,
  inputIds: ReadonlySet<string>,
  page: TemplatePage,
  p: number,
): void {
  const label = `page '${page.name}'`;
  const key = decisionKey(page.name);
  if (page.kind === 'approval' && inputIds.has(key)) {
    refuse(
      `${label}: an inputId '${key}' would shadow the page's decision, which rules test by that name`,
      'pages',
      p,
      'kind',
    );
  }
  if (page.kind !== 'approval') {
    for (const key of ['onReject', 'maxRejections', 'decisionTimeout'] as const) {
      if (page[key] !== undefined) {
        refuse(
          `${label} has ${key}, which only an approval page (kind "approval") takes`,
          'pages',
          p,
          key,
        );
      }
    }
    return;
  }
  const onReject = page.onReject;
  if (onReject?.action === 'reopen') {
    const target = onReject.page === undefined ? undefined : index.pages.get(onReject.page);
    if (target === undefined) {
      refuse(
        `${label}: onReject reopen needs \`page\`, the name of an earlier page`,
        'pages',
        p,
        'onReject',
        'page',
      );
    } else if (target >= p) {
      refuse(
        `${label}: onReject can only reopen an earlier page; '${onReject.page}' is not before it`,
        'pages',
        p,
        'onReject',
        'page',
      );
    }
  } else if (onReject !== undefined && 'page' in onReject && onReject.page !== undefined) {
    refuse(`${label}: onReject ${onReject.action} takes no page`, 'pages', p, 'onReject', 'page');
  }
}

function checkCandidateField(
  index: DefinitionIndex,
  page: TemplatePage,
  p: number,
  key: 'candidateUsersFromField' | 'candidateGroupsFromField',
): void {
  const inputId = page[key];
  if (inputId === undefined) return;
  const at = index.fields.get(inputId);
  if (!at) refuse(`page '${page.name}': ${key} names no field ('${inputId}')`, 'pages', p, key);
  else if (at.page > p) {
    refuse(
      `page '${page.name}': ${key} must name a field of this page or an earlier one, whose value is known (or given when the run is created) when the step begins`,
      'pages',
      p,
      key,
    );
  } else if (!PEOPLE_TYPES.includes(fieldType(at.field))) {
    refuse(
      `page '${page.name}': ${key} names '${inputId}', a ${fieldType(at.field)} field; people are named by ${PEOPLE_TYPES.join(', ')} fields`,
      'pages',
      p,
      key,
    );
  }
}

function checkEscalations(definition: TemplateDefinition, page: TemplatePage, p: number): void {
  const escalations = page.escalations ?? [];
  if (escalations.length === 0) return;
  const setsDue = (definition.rules ?? []).some((rule) =>
    rule.then.some((action) => action.action === 'set_due' && action.page === page.name),
  );
  if (page.dueInHours === undefined && page.due === undefined && !setsDue) {
    refuse(
      `page '${page.name}' has escalations but no due time (dueInHours, due or a set_due rule): a step is overdue only past one`,
      'pages',
      p,
      'escalations',
    );
  }
  escalations.forEach((escalation, e) => {
    const before = escalations[e - 1];
    if (before && escalation.overdueByHours < before.overdueByHours) {
      refuse(
        `page '${page.name}': escalations go in order of overdueByHours`,
        'pages',
        p,
        'escalations',
        e,
        'overdueByHours',
      );
    }
  });
}
