// Public surface of @baton/workspace.
export {};
