// The save-time check of a typed field's definition (after its schema, definition-schema.ts):
// the properties its type takes, limits that hold together, a pattern RE2 compiles and that is
// not too complex, sound options, and a default its own field takes.
import { DomainError, pointer } from '../../errors.js';
import {
  FIELD_TYPES,
  TEMPLATE_LIMITS,
  TEXT_TYPES,
  type TemplateInputField,
} from './definition-types.js';
import {
  codePointLength,
  fieldType,
  isEmptyValue,
  patternProblem,
  quote,
  valueProblem,
} from './field-values.js';

/**
 * Checks a field's definition when a template is saved; throws
 * DomainError('invalid_template_field', message, pointer(...path, '<property>')) naming the
 * property at fault. `path` is e.g. ['pages', 2, 'inputFields', 5]. The JSON Schema has already
 * checked the properties' basic types and lengths; this checks what a schema cannot.
 */
export function checkFieldDefinition(
  field: TemplateInputField,
  path: ReadonlyArray<string | number>,
): void {
  const label = `field ${JSON.stringify(field.inputId)}`;
  const refuse = (property: string | number, message: string, ...rest: Array<string | number>) =>
    new DomainError(
      'invalid_template_field',
      `${label}: ${message}`,
      pointer(...path, property, ...rest),
    );

  const type = fieldType(field);
  if (!(FIELD_TYPES as readonly string[]).includes(type)) {
    throw refuse('type', `unknown type ${JSON.stringify(String(type))}`);
  }
  const isText = TEXT_TYPES.includes(type);
  const isChoice = type === 'select' || type === 'multi_select';

  // Properties the type does not take: silently ignoring them would hide the author's mistake.
  for (const property of ['min', 'max', 'integer'] as const) {
    if (field[property] !== undefined && type !== 'number') {
      throw refuse(property, `${property} applies only to number fields, not to a ${type} field`);
    }
  }
  for (const property of ['minLength', 'maxLength', 'pattern'] as const) {
    if (field[property] !== undefined && !isText) {
      throw refuse(
        property,
        `${property} applies only to ${TEXT_TYPES.join(', ')} fields, not to a ${type} field`,
      );
    }
  }
  if (field.options !== undefined && !isChoice) {
    throw refuse(
      'options',
      `options apply only to select and multi_select fields, not to a ${type} field`,
    );
  }

  if (type === 'number') {
    for (const property of ['min', 'max'] as const) {
      const bound = field[property];
      if (bound !== undefined && !Number.isFinite(bound)) {
        throw refuse(property, `${property} must be a finite number`);
      }
    }
    if (field.min !== undefined && field.max !== undefined && field.min > field.max) {
      throw refuse('max', `max ${field.max} is less than min ${field.min}`);
    }
  }

  if (isText) {
    for (const property of ['minLength', 'maxLength'] as const) {
      const bound = field[property];
      if (bound !== undefined && !(Number.isInteger(bound) && bound >= 0)) {
        throw refuse(property, `${property} must be a whole number, 0 or more`);
      }
    }
    if (
      field.minLength !== undefined &&
      field.maxLength !== undefined &&
      field.minLength > field.maxLength
    ) {
      throw refuse(
        'maxLength',
        `maxLength ${field.maxLength} is less than minLength ${field.minLength}`,
      );
    }
    if (field.pattern !== undefined) {
      const why = patternProblem(field, field.pattern);
      if (why !== undefined) throw refuse('pattern', why);
    }
  }

  if (isChoice) {
    const options = field.options;
    if (options === undefined || options.length === 0) {
      throw refuse('options', `a ${type} field needs options: at least 1`);
    }
    if (options.length > TEMPLATE_LIMITS.options) {
      throw refuse(
        'options',
        `a ${type} field takes at most ${TEMPLATE_LIMITS.options} options, not ${options.length}`,
      );
    }
    const seen = new Set<string>();
    for (let i = 0; i < options.length; i++) {
      const option = options[i];
      if (typeof option !== 'string') throw refuse('options', 'each option must be a string', i);
      const length = codePointLength(option);
      if (length === 0 || length > TEMPLATE_LIMITS.optionLength) {
        throw refuse(
          'options',
          `each option must have 1 to ${TEMPLATE_LIMITS.optionLength} characters`,
          i,
        );
      }
      if (seen.has(option)) {
        throw refuse('options', `the option ${quote(option)} appears twice`, i);
      }
      seen.add(option);
    }
  }

  // Only now are the limits the default is checked against known to be sound.
  if (field.default !== undefined && !isEmptyValue(field, field.default)) {
    const why = valueProblem(field, field.default);
    if (why !== undefined) throw refuse('default', `the default ${why}`);
  }
}
