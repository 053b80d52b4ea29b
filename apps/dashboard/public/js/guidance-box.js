// The operator's guidance box on a project page: the text goes to the running session at its
// next model turn (or to the next session), through the same control call as `baton say`.
import { postJson, projectPath } from './api.js';
import { h, replace, submitHandler } from './dom.js';

/** Longest text the control API accepts (GUIDANCE_MAX_CHARACTERS in @baton/projects). */
const MAX_CHARACTERS = 4000;

/** @param {string} projectId */
export function guidanceBox(projectId) {
  const input = h('textarea', {
    name: 'guidance',
    rows: 3,
    maxlength: MAX_CHARACTERS,
    placeholder: 'Tell the agent something: it arrives at its next model turn.',
    dataset: { testid: 'guidance-text' },
  });
  const message = h('span', { class: 'action-message', role: 'status' });
  const button = h(
    'button',
    { type: 'submit', class: 'small', dataset: { action: 'say' } },
    'Send',
  );
  const form = h(
    'form',
    {
      class: 'guidance-box',
      on: {
        submit: submitHandler({ button, message }, async () => {
          /** @type {{ guidance: { id: string } }} */
          const result = await postJson(`${projectPath(projectId)}/say`, { text: input.value });
          replace(message, `sent ${result.guidance.id}`);
          input.value = '';
        }),
      },
    },
    input,
    h('div', {}, button, message),
  );
  return form;
}
