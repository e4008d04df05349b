// Modules and their slots: add a module, log in and out, pick the partition to work on.
import { useState } from "react";
import type { ConnectionView, SlotView, TokenView, UserKind } from "../bindings";
import { Badge, Dialog, EmptyState, ErrorBox, Field } from "../components";
import { api } from "../ipc";
import { useAuditActions, useConnections, useConnectionsActions, useNavigate, usePartition, usePartitionActions, useToast } from "../state";
import { useCommand } from "../useCommand";
import { ChangePinDialog, ROLE_NAMES } from "./Credentials";

function pinFlags(t: TokenView) {
  const out: { tone: "warn" | "bad"; text: string }[] = [];
  if (t.user_pin_locked) out.push({ tone: "bad", text: "user PIN locked" });
  else if (t.user_pin_final_try) out.push({ tone: "bad", text: "user PIN: final try" });
  else if (t.user_pin_count_low) out.push({ tone: "warn", text: "user PIN: count low" });
  if (t.so_pin_locked) out.push({ tone: "bad", text: "SO PIN locked" });
  else if (t.so_pin_final_try) out.push({ tone: "bad", text: "SO PIN: final try" });
  else if (t.so_pin_count_low) out.push({ tone: "warn", text: "SO PIN: count low" });
  if (t.user_pin_to_be_changed) out.push({ tone: "warn", text: "user PIN must be changed" });
  if (t.so_pin_to_be_changed) out.push({ tone: "warn", text: "SO PIN must be changed" });
  if (!t.initialized) out.push({ tone: "warn", text: "not initialized" });
  return out;
}

/// The roles a login offers: Luna's four on a Luna-family module, else user and SO.
const LUNA_ROLES: UserKind[] = ["user", "crypto_user", "limited_crypto_officer", "so"];
const PLAIN_ROLES: UserKind[] = ["user", "so"];

export function LoginDialog({
  partitionId,
  label,
  token,
  luna = false,
  onClose,
}: {
  partitionId: string;
  label: string;
  token?: TokenView | null;
  luna?: boolean;
  onClose: () => void;
}) {
  const toast = useToast();
  const refresh = useRefreshAll();
  const [user, setUser] = useState<UserKind>("user");
  const [pin, setPin] = useState("");
  // After a login the token wants the PIN changed first: the change is offered at once.
  const [mustChange, setMustChange] = useState<{ user: UserKind; reason: string } | null>(null);
  const {
    run: logIn,
    loading: busy,
    error,
  } = useCommand(async (entered: string) => {
    const r = await api.login(partitionId, user, entered);
    toast("ok", `Logged in to ${label} as ${r.role_name}.`);
    if (r.audit.state === "locked")
      toast("info", `The audit trail stays locked: its key is held by ${r.audit.holder}. Log in there to generate or delete keys.`);
    await refresh();
    if (r.pin_to_be_changed) setMustChange({ user: r.user, reason: r.pin_change_reason ?? "The token wants the PIN changed first." });
    else onClose();
  });
  if (mustChange && token)
    return <ChangePinDialog partitionId={partitionId} token={token} user={mustChange.user} reason={mustChange.reason} onClose={onClose} />;
  const submit = async () => {
    if (!pin) return;
    const entered = pin;
    // The field is cleared whatever happens; the PIN lives only for this one call.
    setPin("");
    await logIn(entered);
  };
  return (
    <Dialog
      title={`Log in to ${label}`}
      onClose={onClose}
      footer={
        <>
          <button onClick={onClose}>Cancel</button>
          <button className="primary" onClick={() => void submit()} disabled={busy || !pin} data-testid="login-submit">
            {busy ? "Logging in…" : "Log in"}
          </button>
        </>
      }
    >
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <fieldset className="radio-row">
          <legend>Role</legend>
          {(luna ? LUNA_ROLES : PLAIN_ROLES).map((r) => (
            <label key={r}>
              <input type="radio" name="role" checked={user === r} onChange={() => setUser(r)} data-testid={`role-${r}`} /> {ROLE_NAMES[r]}
            </label>
          ))}
        </fieldset>
        <Field label="PIN" hint="Never stored. A wrong PIN is not retried; the token counts every attempt.">
          <input
            type="password"
            autoComplete="off"
            value={pin}
            onChange={(e) => setPin(e.target.value)}
            data-testid="pin-input"
            aria-label="PIN"
          />
        </Field>
      </form>
      {error && <ErrorBox error={error} title="Login refused" />}
    </Dialog>
  );
}

/// After a login or logout: the slots' PIN flags, the partition's login state, the audit key.
function useRefreshAll() {
  const { refreshConnections } = useConnectionsActions();
  const { refreshPartition } = usePartitionActions();
  const { refreshAudit } = useAuditActions();
  return async () => {
    await Promise.all([refreshConnections(), refreshPartition(), refreshAudit()]);
  };
}

function SlotRow({ slot, moduleBuiltin, luna }: { slot: SlotView; moduleBuiltin: boolean; luna: boolean }) {
  const { partitionId, partition } = usePartition();
  const { selectPartition } = usePartitionActions();
  const navigate = useNavigate();
  const toast = useToast();
  const refresh = useRefreshAll();
  const [login, setLogin] = useState(false);
  const t = slot.token;
  const pid = slot.partition_id;
  const selected = pid !== null && pid === partitionId;
  const loggedIn = selected ? partition?.logged_in : null;
  const { run: logOut } = useCommand(
    async (pid: string) => {
      await api.logout(pid);
      toast("ok", `Logged out of ${t?.label ?? pid}.`);
      await refresh();
    },
    { errorToast: "Logout failed" },
  );
  return (
    <tr className={selected ? "selected" : undefined} data-testid={`slot-${slot.slot_id}`}>
      <td>{slot.slot_id}</td>
      <td>
        {t ? (
          <>
            <strong>{t.label || "(no label)"}</strong>
            {moduleBuiltin && <Badge tone="info">emulator</Badge>}
          </>
        ) : (
          <span className="muted">{slot.token_present ? "token not readable" : "no token"}</span>
        )}
        <div className="muted small">{slot.description}</div>
      </td>
      <td>{t?.serial}</td>
      <td>{t?.model}</td>
      <td>
        {t &&
          pinFlags(t).map((f) => (
            <Badge key={f.text} tone={f.tone}>
              {f.text}
            </Badge>
          ))}
      </td>
      <td className="actions">
        {pid && (
          <>
            <button
              onClick={() => {
                selectPartition(pid);
                navigate("partition");
              }}
              aria-label={`Open ${t?.label ?? ""}`}
            >
              Open
            </button>
            {selected && loggedIn ? (
              <button onClick={() => void logOut(pid)}>Log out</button>
            ) : (
              <button
                className="primary"
                onClick={() => {
                  selectPartition(pid);
                  setLogin(true);
                }}
                data-testid="login-button"
              >
                Log in
              </button>
            )}
          </>
        )}
        {login && pid && <LoginDialog partitionId={pid} label={t?.label ?? pid} token={t} luna={luna} onClose={() => setLogin(false)} />}
      </td>
    </tr>
  );
}

function ModuleCard({ conn }: { conn: ConnectionView }) {
  const { refreshConnections } = useConnectionsActions();
  const toast = useToast();
  const m = conn.module;
  const { run: remove } = useCommand(
    async () => {
      await api.removeModule(m.id);
      toast("ok", `Removed ${m.path}.`);
      await refreshConnections();
    },
    { errorToast: "Could not remove the module" },
  );
  return (
    <section className="card" data-testid={`module-${m.id}`}>
      <header className="card-header">
        <div>
          <h3>{m.builtin ? "Built-in partition (lunasim)" : m.library_description || m.path}</h3>
          <div className="muted small">
            {m.path} · {m.manufacturer} {m.library_version} · Cryptoki {m.cryptoki_version} via {m.interface}
            {m.vendor_functions.length > 0 && ` · ${m.vendor_functions.length} Luna functions`}
          </div>
        </div>
        {!m.builtin && (
          <button onClick={() => void remove()} title="Forget this module (logs out of its partitions)">
            Remove
          </button>
        )}
      </header>
      {conn.error && <ErrorBox error={conn.error} title="Slots could not be listed" />}
      {conn.slots.length === 0 && !conn.error ? (
        <EmptyState title="No slots">The module lists no slots. Check the vendor client's configuration.</EmptyState>
      ) : (
        <table className="table">
          <thead>
            <tr>
              <th>Slot</th>
              <th>Token</th>
              <th>Serial</th>
              <th>Model</th>
              <th>PIN state</th>
              <th aria-label="Actions" />
            </tr>
          </thead>
          <tbody>
            {conn.slots.map((s) => (
              <SlotRow key={s.slot_id} slot={s} moduleBuiltin={m.builtin} luna={m.family === "luna"} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function AddModule() {
  const { refreshConnections } = useConnectionsActions();
  const toast = useToast();
  const [path, setPath] = useState("");
  const adding = useCommand(async (p: string) => {
    const m = await api.addModule(p);
    toast("ok", `Added ${m.library_description || m.path}.`);
    setPath("");
    await refreshConnections();
  });
  const picking = useCommand(api.pickModuleFile);
  const busy = adding.loading;
  // One message for both: the latest failure, of the file dialog or of loading the module.
  const error = picking.error ?? adding.error;
  const add = async (p: string) => {
    picking.reset();
    await adding.run(p);
  };
  const browse = async () => {
    const p = await picking.run();
    if (p) {
      setPath(p);
      await adding.run(p);
    }
  };
  return (
    <section className="card">
      <h3>Add a PKCS#11 module</h3>
      <form
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (path.trim()) void add(path.trim());
        }}
      >
        <input
          type="text"
          placeholder="/usr/safenet/lunaclient/lib/libCryptoki2_64.so"
          value={path}
          onChange={(e) => setPath(e.target.value)}
          aria-label="Module path"
          data-testid="module-path"
          spellCheck={false}
        />
        <button type="button" onClick={() => void browse()}>
          Browse…
        </button>
        <button type="submit" className="primary" disabled={busy || !path.trim()} data-testid="module-add">
          {busy ? "Loading…" : "Add"}
        </button>
      </form>
      <p className="muted small">
        Modules you add are remembered. Examples: SoftHSM2 /usr/lib/softhsm/libsofthsm2.so, OpenSC
        /usr/lib/x86_64-linux-gnu/opensc-pkcs11.so.
      </p>
      {error && <ErrorBox error={error} title="The module was not added" />}
    </section>
  );
}

export function ConnectionsView() {
  const { connections, connectionsLoaded } = useConnections();
  const { refreshConnections } = useConnectionsActions();
  return (
    <div className="view">
      <header className="view-header">
        <h1>Connections</h1>
        <button onClick={() => void refreshConnections()}>Refresh</button>
      </header>
      {connectionsLoaded && connections.length === 0 && (
        <EmptyState title="No modules yet">
          Add your HSM vendor's PKCS#11 library below, or turn the built-in partition on in Settings.
        </EmptyState>
      )}
      {connections.map((c) => (
        <ModuleCard key={c.module.id} conn={c} />
      ))}
      <AddModule />
    </div>
  );
}
