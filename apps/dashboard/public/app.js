// The dashboard's client: one page, routed by path. Plain ES modules, no build step.
import { getJson } from './js/api.js';
import { newProjectPage } from './js/new-project.js';
import { projectPage } from './js/project-page.js';
import { projectsPage } from './js/projects-page.js';
import { sessionPage } from './js/session-page.js';

function route() {
  const main = document.getElementById('main');
  if (main === null) throw new Error('The page has no #main element.');
  const path = window.location.pathname;
  const project = /^\/projects\/([^/]+)\/?$/.exec(path);
  const sessionMatch = /^\/projects\/([^/]+)\/sessions\/([^/]+)\/?$/.exec(path);
  for (const link of document.querySelectorAll('[data-nav]')) link.classList.remove('on');
  if (sessionMatch) {
    const projectId = decodeURIComponent(sessionMatch[1] ?? '');
    const sessionId = decodeURIComponent(sessionMatch[2] ?? '');
    sessionPage(main, projectId, sessionId);
    document.title = `${projectId} · session · Baton`;
  } else if (project) {
    const projectId = decodeURIComponent(project[1] ?? '');
    projectPage(main, projectId);
    document.title = `${projectId} · Baton`;
  } else if (path === '/new') {
    document.querySelector('[data-nav=new]')?.classList.add('on');
    newProjectPage(main);
    document.title = 'New project · Baton';
  } else {
    document.querySelector('[data-nav=projects]')?.classList.add('on');
    projectsPage(main);
  }
  /** @type {Promise<{ authRequired: boolean }>} */
  const sessionRead = getJson('/api/session');
  sessionRead

    .then((session) => {
      const logout = document.getElementById('logout');
      if (logout !== null) logout.hidden = !session.authRequired;
    })
    .catch(() => {});
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', route);
else route();
