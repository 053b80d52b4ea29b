// DOM helpers. Every piece of data goes in through textContent or a whitelisted attribute:
// the only HTML we ever insert is the server's sanitised Markdown rendering.
import { errorMessage } from './api.js';

const BLOCKED_ATTRIBUTE = /^on/i;

/**
 * h('a', { href: '/x', class: 'y', on: { click: fn } }, 'text', child)
 * Strings become text nodes; null/undefined/false children are skipped.
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  setAttributes(element, attributes);
  append(element, children);
  return element;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

export function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG_NS, tag);
  setAttributes(element, attributes);
  append(element, children);
  return element;
}

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

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

function isSafeHref(href) {
  // Browsers skip control characters and spaces in a URL's scheme: strip them before checking it.
  // eslint-disable-next-line no-control-regex
  const compact = href.replace(/[\u0000-\u0020\u007f-\u009f]/g, '');
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(compact);
  return scheme === null || ['http', 'https', 'mailto'].includes((scheme[1] ?? '').toLowerCase());
}

/** Replaces an element's children. */
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

/** Inserts HTML the server rendered from Markdown and sanitised (see src/internal/markdown.ts). */
export function setSanitizedHtml(element, html) {
  element.innerHTML = html;
  // Defence in depth: links open in a new tab without a referrer; nothing else is interactive.
  for (const link of element.querySelectorAll('a[href]')) {
    if (!isSafeHref(link.getAttribute('href') ?? '')) link.removeAttribute('href');
    link.setAttribute('rel', 'noopener noreferrer nofollow');
    link.setAttribute('target', '_blank');
  }
}
