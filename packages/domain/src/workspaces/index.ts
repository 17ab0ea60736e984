/** The workspaces a caller may use, each with its repository in brief, and org workspaces' lifecycle. */
export * as Workspaces from "./Workspaces.js"
