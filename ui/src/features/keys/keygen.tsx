// The key generation under way (one at a time): started from the Generate dialog, it is a
// backend job that outlives the dialog, so the officer can close it and work elsewhere
// while a tall HSS tree is built. The job's events (the module's progress, the elapsed
// time) land here; the header shows them, and the dialog shows them again when brought
// back. When the job ends, the dialog that shows it closes; without one, a notification
// says how it ended.
import { useCallback, useMemo, useRef, useState, type ReactNode } from "react";
import type { ApiError, GenerateRequest, LmotsType, LmsType } from "../../bindings";
import i18n from "../../i18n";
import { api, toApiError } from "../../ipc";
import { createSlice } from "../../state/context";
import { useToast } from "../../state/toasts";

/// What the dialog's form held, to show it again with the job.
export interface KeygenForm {
  preset: string;
  levels: [LmsType, LmotsType][];
  purpose: string;
  label: string;
  labelEdited: boolean;
  token: boolean;
  /// Extractable for backup only (never for HSS).
  extractable: boolean;
  /// The private key wants the PIN for each signature (CKA_ALWAYS_AUTHENTICATE).
  alwaysAuthenticate?: boolean;
}

export interface KeygenJob {
  id: number;
  partitionId: string;
  label: string;
  form: KeygenForm;
  /// The backend's elapsed time (twice a second).
  elapsedMs: number;
  /// The module's own progress (lunasim's HSS leaves); null for modules that report none.
  progress: { done: number; total: number } | null;
  /// The first progress report, the start of the rate the time left is estimated from.
  firstProgress: { done: number; ms: number } | null;
  state: "running" | "failed";
  error: ApiError | null;
}

interface Keygen {
  job: KeygenJob | null;
  /// The last job that made its key (a dialog that showed it closes).
  lastDone: number | null;
  /// Whether the header shows the dialog (brought back by its indicator).
  shown: boolean;
}

interface KeygenActions {
  /// Starts generating; `onDone` gets the new key's label once it is made (the Keys view
  /// says so and reloads its list). Ignored while another generation runs.
  start: (partitionId: string, request: GenerateRequest, form: KeygenForm, onDone: (label: string) => void) => void;
  /// A dialog shows the job: its end is shown there, not as a notification. Returns the detach.
  attach: () => () => void;
  /// Brings the dialog back from the header, or lets it go.
  show: () => void;
  hide: () => void;
  /// Forgets a failed generation (its dialog closed).
  dismiss: () => void;
}

const [KeygenContext, useKeygen] = createSlice<Keygen>("useKeygen");
const [KeygenActionsContext, useKeygenActions] = createSlice<KeygenActions>("useKeygenActions");
export { useKeygen, useKeygenActions };

/// The time left from the rate since the first progress report (the set-up before it does not
/// count); null until the rate is known.
export function timeLeftMs(job: Pick<KeygenJob, "elapsedMs" | "progress" | "firstProgress">): number | null {
  const p = job.progress;
  const first = job.firstProgress;
  if (!p || !first || p.total <= 0 || p.done >= p.total) return null;
  let rate = 0;
  if (p.done > first.done && job.elapsedMs > first.ms) rate = (p.done - first.done) / (job.elapsedMs - first.ms);
  else if (p.done > 0 && job.elapsedMs > 0) rate = p.done / job.elapsedMs;
  return rate > 0 ? (p.total - p.done) / rate : null;
}

export function KeygenProvider({ children }: { children: ReactNode }) {
  const toast = useToast();
  const [job, setJob] = useState<KeygenJob | null>(null);
  const [lastDone, setLastDone] = useState<number | null>(null);
  const [shown, setShown] = useState(false);
  const running = useRef(false);
  const attached = useRef(0);
  const nextId = useRef(1);

  const update = useCallback((id: number, f: (j: KeygenJob) => KeygenJob | null) => {
    setJob((j) => (j && j.id === id ? f(j) : j));
  }, []);

  const start = useCallback<KeygenActions["start"]>(
    (partitionId, request, form, onDone) => {
      if (running.current) return;
      running.current = true;
      const id = nextId.current++;
      setJob({
        id,
        partitionId,
        label: request.label,
        form,
        elapsedMs: 0,
        progress: null,
        firstProgress: null,
        state: "running",
        error: null,
      });
      api
        .generateKey(partitionId, request, (e) => {
          if (e.kind === "elapsed") update(id, (j) => ({ ...j, elapsedMs: e.ms }));
          else
            update(id, (j) => ({
              ...j,
              progress: { done: e.done, total: e.total },
              firstProgress: j.firstProgress ?? { done: e.done, ms: j.elapsedMs },
            }));
        })
        .then(
          (key) => {
            running.current = false;
            setJob(null);
            setShown(false);
            setLastDone(id);
            onDone(key.label);
          },
          (e: unknown) => {
            running.current = false;
            const error = toApiError(e);
            if (attached.current > 0) {
              update(id, (j) => ({ ...j, state: "failed", error }));
            } else {
              setJob(null);
              toast("error", i18n.t("keygen.failed_toast", { label: request.label }), error);
            }
          },
        );
    },
    [toast, update],
  );

  const attach = useCallback(() => {
    attached.current++;
    return () => {
      attached.current--;
    };
  }, []);
  const show = useCallback(() => setShown(true), []);
  const hide = useCallback(() => setShown(false), []);
  const dismiss = useCallback(() => setJob((j) => (j && j.state === "failed" ? null : j)), []);

  const state = useMemo(() => ({ job, lastDone, shown }), [job, lastDone, shown]);
  const actions = useMemo(() => ({ start, attach, show, hide, dismiss }), [start, attach, show, hide, dismiss]);
  return (
    <KeygenActionsContext value={actions}>
      <KeygenContext value={state}>{children}</KeygenContext>
    </KeygenActionsContext>
  );
}
