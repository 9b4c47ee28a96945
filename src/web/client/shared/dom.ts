// Building DOM nodes without HTML strings: text is always text (no markup from data can run), attributes are set
// one by one, and handlers are attached as listeners (the pages' CSP allows no inline script).
type Child = Node | string | null | undefined | false | Child[];
type AttributeValue = string | number | boolean | null | undefined;
export type Attributes = Record<string, AttributeValue | ((event: Event) => void)>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, '').toLowerCase(), value);
    else if (value === true) element.setAttribute(name, '');
    else if (value !== false && value !== null && value !== undefined) element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  }
}

/** Replaces everything inside `parent`. */
export function replaceChildren(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** A unique id for label/description wiring. */
let nextId = 0;
export const uid = (prefix: string) => `${prefix}-${++nextId}`;
