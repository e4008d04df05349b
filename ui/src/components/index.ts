// Small building blocks shared by the features, by kind: what an outcome looks like
// (feedback), the modal dialog, form fields, the notifications, the virtualized table.
export { Badge, EmptyState, ErrorBox, ProgressBar } from "./feedback";
export { Dialog } from "./Dialog";
export { Field } from "./Field";
export { Toasts } from "./Toasts";
