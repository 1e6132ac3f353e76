// What an operation's spec, activities and view are inside the workflow sandbox (workflow-bundle.ts): nothing.
export {};
