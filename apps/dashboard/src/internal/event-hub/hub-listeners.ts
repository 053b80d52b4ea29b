import type { EventEntry, ProjectStatus } from '../../control.js';
import type { ProjectView } from '../views.js';

/**
 * `version` is the change-feed version the hub had read when it sent the message: a page loaded
 * at a later version already holds what the message says.
 */
export type HubMessage =
  | { type: 'project'; project: ProjectView; version: number }
  | { type: 'removed'; projectId: string; version: number }
  | { type: 'event'; projectId: string; entry: EventEntry }
  | { type: 'queue'; counts: Record<string, number> }
  | { type: 'counts'; counts: Record<ProjectStatus, number>; total: number; version: number };

export type HubListener = (message: HubMessage) => void;

/** Who listens: the projects page's listeners (the fleet) and each project page's. */
export class HubListeners {
  readonly #fleet = new Set<HubListener>();
  /** A project's entry goes when its last listener does: an entry means someone watches it. */
  readonly #byProject = new Map<string, Set<HubListener>>();

  /** Someone lists projects (a projects page is open). */
  get listsProjects(): boolean {
    return this.#fleet.size > 0;
  }

  get isEmpty(): boolean {
    return this.#fleet.size === 0 && this.#byProject.size === 0;
  }

  /** Someone has the project's page open. */
  watches(projectId: string): boolean {
    return this.#byProject.has(projectId);
  }

  watchedIds(): string[] {
    return [...this.#byProject.keys()];
  }

  addFleet(listener: HubListener): void {
    this.#fleet.add(listener);
  }

  addProject(projectId: string, listener: HubListener): void {
    let listeners = this.#byProject.get(projectId);
    if (listeners === undefined) {
      listeners = new Set();
      this.#byProject.set(projectId, listeners);
    }
    listeners.add(listener);
  }

  removeFleet(listener: HubListener): void {
    this.#fleet.delete(listener);
  }

  removeProject(projectId: string, listener: HubListener): void {
    const listeners = this.#byProject.get(projectId);
    listeners?.delete(listener);
    if (listeners?.size === 0) this.#byProject.delete(projectId);
  }

  /** To the fleet's listeners and the project's. */
  deliver(projectId: string, message: HubMessage): void {
    for (const listener of this.#fleet) listener(message);
    for (const listener of this.#byProject.get(projectId) ?? []) listener(message);
  }

  deliverToFleet(message: HubMessage): void {
    for (const listener of this.#fleet) listener(message);
  }

  clear(): void {
    this.#fleet.clear();
    this.#byProject.clear();
  }
}
