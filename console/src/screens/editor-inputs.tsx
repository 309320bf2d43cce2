// The template editor's inputs, each named by the JSON Pointer of the body's property it edits
// (`/pages/0/inputFields/1/pattern`, `/rules/2/when/all/0/value`). A refusal of the API names
// such a pointer: its message shows under the input with the longest pointer that is the
// refusal's or leads to it (an input for `/pages/0/inputFields/1/options` takes a refusal of
// `/pages/0/inputFields/1/options/3`), and at the top of the form only when none does.
import type { ComponentChildren } from 'preact';
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { FieldMessage } from '../ui.js';

/** Where the API's refusal shows: at the input of `pointer`, or (null) at the top of the form. */
export interface Placement {
  message: string;
  pointer: string | null;
}

export const PlacementContext = createContext<Placement | null>(null);

/** The refusal's message when it shows at this pointer. */
export function useMessageAt(pointer: string): string | undefined {
  const placement = useContext(PlacementContext);
  return placement && placement.pointer === pointer ? placement.message : undefined;
}

/**
 * The pointer, among the form's inputs and groups (each marked data-pointer), where a refusal
 * naming `field` shows: that input's, or the nearest one leading to it; null when none does.
 */
export function placeOf(form: HTMLElement, field: string | undefined): string | null {
  if (!field) return null;
  let best: string | null = null;
  for (const element of form.querySelectorAll<HTMLElement>('[data-pointer]')) {
    const pointer = element.dataset.pointer!;
    if (
      (field === pointer || field.startsWith(`${pointer}/`)) &&
      pointer.length > (best ?? '').length
    )
      best = pointer;
  }
  return best;
}

/** Ids for an input and its message, from its pointer. */
export const idOf = (pointer: string) => `tpl${pointer.replace(/\//g, '-')}`;

interface Labelled {
  pointer: string;
  /** The visible label. */
  label: string;
  /** Read before the label by assistive technology only ("Page 1, field 2: "). */
  prefix?: string;
  /** The whole label for assistive technology only (the input sits in a sentence). */
  hideLabel?: boolean;
  class?: string;
}

function Label({ id, label, prefix, hideLabel }: Labelled & { id: string }) {
  return (
    <label for={id} class={hideLabel ? 'tpl-sr' : undefined}>
      {prefix && <span class="tpl-sr">{prefix}</span>}
      {label}
    </label>
  );
}

/** A labelled text input tied to the API's message for its pointer. */
export function TextInput(
  props: Labelled & {
    value: string;
    onInput(value: string): void;
    inputMode?: 'decimal' | 'numeric';
    placeholder?: string;
    multiline?: boolean;
    help?: string;
  },
) {
  const { pointer, value, onInput, inputMode, placeholder, multiline, help } = props;
  const message = useMessageAt(pointer);
  const id = idOf(pointer);
  const describedBy =
    [help ? `${id}-help` : '', message ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  const common = {
    id,
    'data-pointer': pointer,
    value,
    placeholder,
    'aria-invalid': message ? true : undefined,
    'aria-describedby': describedBy,
  };
  return (
    <div class={`field${props.class ? ` ${props.class}` : ''}`}>
      <Label id={id} {...props} />
      {multiline ? (
        <textarea {...common} onInput={(event) => onInput(event.currentTarget.value)} />
      ) : (
        <input
          {...common}
          type="text"
          inputMode={inputMode}
          onInput={(event) => onInput(event.currentTarget.value)}
        />
      )}
      {help && (
        <small class="muted" id={`${id}-help`}>
          {help}
        </small>
      )}
      <FieldMessage id={`${id}-error`} message={message} />
    </div>
  );
}

/** A labelled select tied to the API's message for its pointer. */
export function SelectInput<T extends string>(
  props: Labelled & {
    value: T;
    options: ReadonlyArray<readonly [T, string]>;
    onChange(value: T): void;
  },
) {
  const { pointer, value, options, onChange } = props;
  const message = useMessageAt(pointer);
  const id = idOf(pointer);
  return (
    <div class={`field${props.class ? ` ${props.class}` : ''}`}>
      <Label id={id} {...props} />
      <select
        id={id}
        data-pointer={pointer}
        value={value}
        aria-invalid={message ? true : undefined}
        aria-describedby={message ? `${id}-error` : undefined}
        onChange={(event) => onChange(event.currentTarget.value as T)}
      >
        {options.map(([v, words]) => (
          <option key={v} value={v}>
            {words}
          </option>
        ))}
      </select>
      <FieldMessage id={`${id}-error`} message={message} />
    </div>
  );
}

/** A labelled checkbox tied to the API's message for its pointer. */
export function CheckInput({
  pointer,
  label,
  prefix,
  checked,
  onChange,
}: Labelled & { checked: boolean; onChange(checked: boolean): void }) {
  const message = useMessageAt(pointer);
  const id = idOf(pointer);
  return (
    <div class="field tpl-check">
      <label class="check">
        <input
          type="checkbox"
          id={id}
          data-pointer={pointer}
          checked={checked}
          aria-invalid={message ? true : undefined}
          aria-describedby={message ? `${id}-error` : undefined}
          onChange={(event) => onChange(event.currentTarget.checked)}
        />
        {prefix && <span class="tpl-sr">{prefix}</span>}
        {label}
      </label>
      <FieldMessage id={`${id}-error`} message={message} />
    </div>
  );
}

/**
 * A place for the messages about a group rather than one input (a page's due time, a rule, its
 * conditions): the group's own element carries the pointer, the message shows where this is.
 */
export function GroupMessage({ pointer }: { pointer: string }) {
  return <FieldMessage id={`${idOf(pointer)}-error`} message={useMessageAt(pointer)} />;
}

/** A group of inputs (a fieldset) that a refusal can name as a whole. */
export function Group({
  pointer,
  legend,
  class: className,
  children,
}: {
  pointer: string;
  legend: ComponentChildren;
  class?: string;
  children: ComponentChildren;
}) {
  const message = useMessageAt(pointer);
  return (
    <fieldset
      class={className}
      data-pointer={pointer}
      aria-describedby={message ? `${idOf(pointer)}-error` : undefined}
    >
      <legend>{legend}</legend>
      {children}
      <GroupMessage pointer={pointer} />
    </fieldset>
  );
}
