/**
 * The one shape of a `/projects/:id/...` read: the id checked by the project-id rule, the query
 * (when the route takes one) parsed by its `@baton/projects` schema, an optional gate (the heavy
 * work limit), the project read (a 404 naming the id when there is none), then the handler with
 * all of it. Every refusal is the one-line JSON error of `validation.ts`.
 */
import type { Context, Hono, MiddlewareHandler } from 'hono';
import { every } from 'hono/combine';
import type { z } from 'zod';
import type { ProjectRecord } from '../control.js';
import { validProjectId, validQuery } from './validation.js';

interface ProjectRequest<Query> {
  context: Context;
  projectId: string;
  /** The project as read for this request. */
  project: ProjectRecord;
  /** The parsed query; `undefined` for a route that takes none. */
  query: Query;
}

interface ProjectRouteOptions<Schema extends z.ZodType | undefined> {
  /** The route's query schema. Default: none (the query string is not read). */
  query?: Schema;
  /** Runs after validation and before the project is read (the heavy-work gate). */
  gate?: MiddlewareHandler | undefined;
}

type QueryOf<Schema> = Schema extends z.ZodType ? z.output<Schema> : undefined;

/** Reads what the validators stored on the request (typed by the schemas given to them). */
function validated<T>(context: Context, target: 'param' | 'query'): T {
  return (context.req.valid as (target: 'param' | 'query') => T)(target);
}

/** Registers one `GET` route in the shape above. */
export type ProjectRoute = <Schema extends z.ZodType | undefined = undefined>(
  path: string,
  options: ProjectRouteOptions<Schema>,
  handler: (request: ProjectRequest<QueryOf<Schema>>) => Promise<Response> | Response,
) => void;

/** The `ProjectRoute` of `api`, reading projects with `requireProject`. */
export function projectRoutes(
  api: Hono,
  requireProject: (projectId: string) => Promise<ProjectRecord>,
): ProjectRoute {
  return (path, options, handler) => {
    const middleware: MiddlewareHandler[] = [validProjectId];
    if (options.query !== undefined) middleware.push(validQuery(options.query));
    if (options.gate !== undefined) middleware.push(options.gate);
    api.get(path, every(...middleware), async (context) => {
      const projectId = validated<{ id: string }>(context, 'param').id;
      const query = options.query === undefined ? undefined : validated(context, 'query');
      const project = await requireProject(projectId);
      return handler({ context, projectId, project, query: query as never });
    });
  };
}
