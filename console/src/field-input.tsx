// One input for a typed field's value, as the browser's own controls take it — a number field,
// a date picker, a date and time (sent with the browser's offset), a select, checkboxes for
// several options (sent as a JSON array), a checkbox ("true"/"false"), email and web address
// inputs, a text area for long text — with its label, help text and the API's message under it,
// tied to it for assistive technology. The value is always the API's string form.
import type { ComponentChildren } from 'preact';
import { listOf, localOfRfc3339, offsetOf, rfc3339OfLocal } from './field-types.js';
import type { FieldType } from './vocabulary.js';
import { FieldMessage } from './ui.js';

/** What the input needs of a field's definition. */
export interface InputField {
  type?: FieldType;
  options?: string[];
  placeholder?: string;
  help?: string;
  min?: number;
  max?: number;
  integer?: boolean;
}

const ids = (...parts: Array<string | false | undefined>) =>
  parts.filter((p): p is string => !!p).join(' ') || undefined;

export function FieldInput({
  id,
  label,
  field,
  value,
  onValue,
  message,
  required,
  hideLabel,
  anchor,
  class: className,
}: {
  id: string;
  /** The label's content (a field's name, a required mark). */
  label: ComponentChildren;
  field: InputField;
  value: string;
  onValue(value: string): void;
  /** The API's message about this value. */
  message?: string;
  required?: boolean;
  /** The label for assistive technology only (the input sits in a sentence that says it). */
  hideLabel?: boolean;
  /** A JSON Pointer the form's messages are placed by (see screens/editor-inputs.tsx). */
  anchor?: string;
  class?: string;
}) {
  const type = field.type ?? 'text';
  const helpId = field.help ? `${id}-help` : undefined;
  const errorId = message ? `${id}-error` : undefined;
  const zoneId = type === 'datetime' ? `${id}-zone` : undefined;
  const describedBy = ids(helpId, zoneId, errorId);
  const invalid = message ? true : undefined;
  const labelClass = hideLabel ? 'tpl-sr' : undefined;
  const tail = (
    <>
      {field.help && (
        <p class="field-help" id={helpId}>
          {field.help}
        </p>
      )}
      <FieldMessage id={`${id}-error`} message={message} />
    </>
  );
  const cls = `field typed-${type}${className ? ` ${className}` : ''}`;

  if (type === 'multi_select') {
    const chosen = listOf(value);
    const options = field.options ?? [];
    // Options given that are no longer offered stay visible, so that nothing is sent unseen.
    const shown = [...options, ...chosen.filter((c) => !options.includes(c))];
    return (
      <fieldset class={`${cls} choices`} data-pointer={anchor} aria-describedby={describedBy}>
        <legend class={labelClass}>{label}</legend>
        {shown.length === 0 && <span class="muted">No options.</span>}
        {shown.map((option, i) => (
          <label class="check" key={option}>
            <input
              type="checkbox"
              id={i === 0 ? id : undefined}
              checked={chosen.includes(option)}
              aria-invalid={invalid}
              onChange={(event) => {
                const on = event.currentTarget.checked;
                const next = shown.filter((o) => (o === option ? on : chosen.includes(o)));
                onValue(JSON.stringify(next));
              }}
            />
            {option}
          </label>
        ))}
        {tail}
      </fieldset>
    );
  }

  if (type === 'checkbox') {
    return (
      <div class={cls} data-pointer={anchor}>
        <label class="check">
          <input
            type="checkbox"
            id={id}
            checked={value === 'true'}
            aria-required={required ? 'true' : undefined}
            aria-invalid={invalid}
            aria-describedby={describedBy}
            onChange={(event) => onValue(event.currentTarget.checked ? 'true' : 'false')}
          />
          <span class={labelClass}>{label}</span>
        </label>
        {tail}
      </div>
    );
  }

  const common = {
    id,
    'aria-required': required ? ('true' as const) : undefined,
    'aria-invalid': invalid,
    'aria-describedby': describedBy,
  };
  let control;
  switch (type) {
    case 'long_text':
      control = (
        <textarea
          {...common}
          value={value}
          placeholder={field.placeholder}
          onInput={(event) => onValue(event.currentTarget.value)}
        />
      );
      break;
    case 'select': {
      const options = field.options ?? [];
      control = (
        <select {...common} value={value} onChange={(event) => onValue(event.currentTarget.value)}>
          <option value="">{field.placeholder || '— none chosen —'}</option>
          {options.map((option) => (
            <option key={option} value={option}>
              {option}
            </option>
          ))}
          {value && !options.includes(value) && <option value={value}>{value}</option>}
        </select>
      );
      break;
    }
    case 'datetime': {
      const local = localOfRfc3339(value);
      control = (
        <>
          <input
            {...common}
            type="datetime-local"
            value={local}
            onInput={(event) => onValue(rfc3339OfLocal(event.currentTarget.value))}
          />
          <small class="muted" id={zoneId}>
            Your time zone: UTC{offsetOf(local ? new Date(local) : new Date())}
          </small>
        </>
      );
      break;
    }
    case 'number':
      control = (
        <input
          {...common}
          type="number"
          step={field.integer ? 1 : 'any'}
          min={field.min}
          max={field.max}
          value={value}
          placeholder={field.placeholder}
          onInput={(event) => onValue(event.currentTarget.value)}
        />
      );
      break;
    case 'date':
      control = (
        <input
          {...common}
          type="date"
          value={value}
          onInput={(event) => onValue(event.currentTarget.value)}
        />
      );
      break;
    default: {
      const input = (event: { currentTarget: HTMLInputElement }) =>
        onValue(event.currentTarget.value);
      const props = { ...common, value, placeholder: field.placeholder, onInput: input };
      control =
        type === 'email' ? (
          <input {...props} type="email" />
        ) : type === 'url' ? (
          <input {...props} type="url" />
        ) : (
          <input {...props} type="text" />
        );
    }
  }
  return (
    <div class={cls} data-pointer={anchor}>
      <label for={id} class={labelClass}>
        {label}
      </label>
      {control}
      {tail}
    </div>
  );
}
