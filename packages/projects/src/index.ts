// Public surface of @baton/projects.
export {};
