// DOM helpers. Every piece of data goes in through textContent or a whitelisted attribute:
// the only HTML we ever insert is the server's sanitised Markdown rendering.
import { errorMessage } from './api.js';

const BLOCKED_ATTRIBUTE = /^on/i;

/**
 * What `h`, `svg` and `replace` take as children: nodes, text, or lists of them (two levels deep;
 * JSDoc types cannot recurse); `null`, `undefined` and `false` are skipped.
 * @typedef {Node | string | number | boolean | null | undefined} Leaf
 * @typedef {Leaf | ReadonlyArray<Leaf | ReadonlyArray<Leaf>>} Child
 */

/**
 * Attributes: strings, numbers and `true` are set, `null`, `undefined` and `false` skipped; `on`
 * adds listeners, `dataset` sets `data-*` values.
 * @typedef {{ on?: Record<string, (event: Event) => unknown>, dataset?: Record<string, string | number | boolean>, [name: string]: unknown }} Attributes
 */

/**
 * h('a', { href: '/x', class: 'y', on: { click: fn } }, 'text', child)
 * Strings become text nodes; null/undefined/false children are skipped.
 * @template {keyof HTMLElementTagNameMap} Tag
 * @param {Tag} tag
 * @param {Attributes} [attributes]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[Tag]}
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  setAttributes(element, attributes);
  append(element, children);
  return element;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * `h` for SVG elements.
 * @param {string} tag
 * @param {Attributes} [attributes]
 * @param {...Child} children
 */
export function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG_NS, tag);
  setAttributes(element, attributes);
  append(element, children);
  return element;
}

/**
 * @param {HTMLElement | SVGElement} element
 * @param {Attributes} attributes
 */
function setAttributes(element, attributes) {
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'on') {
      for (const [event, listener] of Object.entries(value))
        element.addEventListener(event, listener);
      continue;
    }
    if (name === 'dataset') {
      for (const [key, data] of Object.entries(value)) element.dataset[key] = String(data);
      continue;
    }
    if (BLOCKED_ATTRIBUTE.test(name)) throw new Error(`refusing to set ${name}`);
    if (name === 'href' && !isSafeHref(String(value))) continue;
    element.setAttribute(name, value === true ? '' : String(value));
  }
}

/**
 * @param {Element} element
 * @param {readonly Child[]} children
 */
function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** @param {string} href */
function isSafeHref(href) {
  // Browsers skip control characters and spaces in a URL's scheme: strip them before checking it.
  // eslint-disable-next-line no-control-regex -- stripping control characters is the point
  const compact = href.replace(/[\u0000-\u0020\u007f-\u009f]/g, '');
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(compact);
  return scheme === null || ['http', 'https', 'mailto'].includes((scheme[1] ?? '').toLowerCase());
}

/**
 * Replaces an element's children.
 * @param {Element} element
 * @param {...Child} children
 */
export function replace(element, ...children) {
  element.replaceChildren();
  append(element, children);
}

/**
 * The submit handler of a small form with one button and one status line: it keeps the page
 * from reloading, disables the button while `action` runs and re-enables it after, and shows
 * what `action` throws in the status line, marked as an error (after `onError`, if given). What
 * a success shows is up to `action`.
 */
/**
 * @param {{ button: HTMLButtonElement, message: HTMLElement, onError?: () => void }} parts
 * @param {() => Promise<void>} action
 * @returns {(event: Event) => Promise<void>}
 */
export function submitHandler({ button, message, onError }, action) {
  return async (event) => {
    event.preventDefault();
    message.classList.remove('error');
    button.disabled = true;
    try {
      await action();
    } catch (error) {
      onError?.();
      replace(message, errorMessage(error));
      message.classList.add('error');
    } finally {
      button.disabled = false;
    }
  };
}

/**
 * Inserts HTML the server rendered from Markdown and sanitised (see src/internal/markdown.ts).
 * @param {Element} element
 * @param {string} html
 */
export function setSanitizedHtml(element, html) {
  element.innerHTML = html;
  // Defence in depth: links open in a new tab without a referrer; nothing else is interactive.
  for (const link of element.querySelectorAll('a[href]')) {
    if (!isSafeHref(link.getAttribute('href') ?? '')) link.removeAttribute('href');
    link.setAttribute('rel', 'noopener noreferrer nofollow');
    link.setAttribute('target', '_blank');
  }
}
