// Modules and their slots: add a module, log in and out, pick the partition to work on.
import { useState } from "react";
import { useTranslation } from "react-i18next";
import type { ConnectionView, SlotView, TokenView, UserKind } from "../../bindings";
import { Badge, Dialog, EmptyState, ErrorBox, Field } from "../../components";
import i18n from "../../i18n";
import { api } from "../../ipc";
import {
  useAuditActions,
  useConnections,
  useConnectionsActions,
  useNavigate,
  usePartition,
  usePartitionActions,
  useToast,
} from "../../state";
import { useCommand } from "../../useCommand";
import { ChangePinDialog } from "../credentials/PinDialogs";
import { roleNameText, roleNames } from "../credentials/roles";
import { HaGroupsOfModule } from "../ha/Ha";

/// Where Luna's client library usually is (an example path, the same in every language).
const LUNA_CLIENT = "/usr/safenet/lunaclient/lib/libCryptoki2_64.so";

function pinFlags(t: TokenView) {
  const tr = i18n.t;
  const user = tr("overview.user");
  const so = tr("overview.so");
  const out: { tone: "warn" | "bad"; text: string }[] = [];
  if (t.user_pin_locked) out.push({ tone: "bad", text: tr("overview.pin_locked", { who: user }) });
  else if (t.user_pin_final_try) out.push({ tone: "bad", text: tr("overview.pin_final_try", { who: user }) });
  else if (t.user_pin_count_low) out.push({ tone: "warn", text: tr("overview.pin_count_low", { who: user }) });
  if (t.so_pin_locked) out.push({ tone: "bad", text: tr("overview.pin_locked", { who: so }) });
  else if (t.so_pin_final_try) out.push({ tone: "bad", text: tr("overview.pin_final_try", { who: so }) });
  else if (t.so_pin_count_low) out.push({ tone: "warn", text: tr("overview.pin_count_low", { who: so }) });
  if (t.user_pin_to_be_changed) out.push({ tone: "warn", text: tr("overview.pin_to_be_changed", { who: user }) });
  if (t.so_pin_to_be_changed) out.push({ tone: "warn", text: tr("overview.pin_to_be_changed", { who: so }) });
  if (!t.initialized) out.push({ tone: "warn", text: tr("connections.not_initialized") });
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
  const { t } = useTranslation();
  const toast = useToast();
  const refresh = useRefreshAll();
  const names = roleNames();
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
    const role = user === "so" ? "connections.logged_in_so" : user === "user" ? "connections.logged_in_user" : null;
    toast("ok", role ? t(role, { label }) : t("connections.logged_in_role", { label, role: roleNameText(r.role_name) }));
    if (r.audit.state === "locked") toast("info", t("connections.audit_stays_locked", { holder: r.audit.holder }));
    await refresh();
    // Where the dialog knows the token (Connections), the change is offered at once.
    if (r.pin_to_be_changed && token) setMustChange({ user: r.user, reason: r.pin_change_reason ?? t("credentials.token_wants_change") });
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
      title={t("connections.log_in_to", { label })}
      onClose={onClose}
      footer={
        <>
          <button onClick={onClose}>{t("common.cancel")}</button>
          <button className="primary" onClick={() => void submit()} disabled={busy || !pin} data-testid="login-submit">
            {busy ? t("connections.logging_in") : t("connections.log_in")}
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
          <legend>{t("connections.role")}</legend>
          {(luna ? LUNA_ROLES : PLAIN_ROLES).map((r) => (
            <label key={r}>
              <input type="radio" name="role" checked={user === r} onChange={() => setUser(r)} data-testid={`role-${r}`} /> {names[r]}
            </label>
          ))}
        </fieldset>
        <Field label={t("connections.pin")} hint={t("connections.pin_hint")}>
          <input
            type="password"
            autoComplete="off"
            value={pin}
            onChange={(e) => setPin(e.target.value)}
            data-testid="pin-input"
            aria-label={t("connections.pin")}
          />
        </Field>
      </form>
      {error && <ErrorBox error={error} title={t("connections.login_refused")} />}
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
  const { t: tr } = useTranslation();
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
      toast("ok", tr("connections.logged_out", { label: t?.label ?? pid }));
      await refresh();
    },
    { errorToast: tr("connections.logout_failed") },
  );
  return (
    <tr className={selected ? "selected" : undefined} data-testid={`slot-${slot.slot_id}`}>
      <td>{slot.slot_id}</td>
      <td>
        {t ? (
          <>
            <strong>{t.label || tr("connections.no_label")}</strong>
            {moduleBuiltin && <Badge tone="info">{tr("overview.emulator")}</Badge>}
          </>
        ) : (
          <span className="muted">{slot.token_present ? tr("connections.token_unreadable") : tr("connections.no_token")}</span>
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
              aria-label={tr("connections.open_label", { label: t?.label ?? "" })}
            >
              {tr("overview.open")}
            </button>
            {selected && loggedIn ? (
              <button onClick={() => void logOut(pid)}>{tr("connections.log_out")}</button>
            ) : (
              <button
                className="primary"
                onClick={() => {
                  selectPartition(pid);
                  setLogin(true);
                }}
                data-testid="login-button"
              >
                {tr("connections.log_in")}
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
  const { t } = useTranslation();
  const { refreshConnections } = useConnectionsActions();
  const toast = useToast();
  const m = conn.module;
  const { run: remove } = useCommand(
    async () => {
      await api.removeModule(m.id);
      toast("ok", t("connections.removed", { path: m.path }));
      await refreshConnections();
    },
    { errorToast: t("connections.not_removed") },
  );
  return (
    <section className="card" data-testid={`module-${m.id}`}>
      <header className="card-header">
        <div>
          <h2>{m.builtin ? t("connections.builtin_title") : m.library_description || m.path}</h2>
          <div className="muted small">
            {t("connections.module_line", {
              path: m.path,
              manufacturer: m.manufacturer,
              version: m.library_version,
              cryptoki: m.cryptoki_version,
              via: m.interface,
            })}
            {m.vendor_functions.length > 0 && ` · ${t("connections.luna_functions", { count: m.vendor_functions.length })}`}
          </div>
        </div>
        {!m.builtin && (
          <button onClick={() => void remove()} title={t("connections.remove_title")}>
            {t("connections.remove")}
          </button>
        )}
      </header>
      {conn.error && <ErrorBox error={conn.error} title={t("connections.slots_unlisted")} />}
      {conn.slots.length === 0 && !conn.error ? (
        <EmptyState title={t("connections.no_slots")}>{t("connections.no_slots_text")}</EmptyState>
      ) : (
        <table className="table">
          <thead>
            <tr>
              <th>{t("connections.col_slot")}</th>
              <th>{t("connections.col_token")}</th>
              <th>{t("connections.col_serial")}</th>
              <th>{t("connections.col_model")}</th>
              <th>{t("connections.col_pin")}</th>
              <th>
                <span className="sr-only">{t("connections.col_actions")}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {conn.slots.map((s) => (
              <SlotRow key={s.slot_id} slot={s} moduleBuiltin={m.builtin} luna={m.family === "luna"} />
            ))}
          </tbody>
        </table>
      )}
      <HaGroupsOfModule moduleId={m.id} />
    </section>
  );
}

function AddModule() {
  const { t } = useTranslation();
  const { refreshConnections } = useConnectionsActions();
  const toast = useToast();
  const [path, setPath] = useState("");
  const adding = useCommand(async (p: string) => {
    const m = await api.addModule(p);
    toast("ok", t("connections.added", { name: m.library_description || m.path }));
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
      <h2>{t("connections.add_title")}</h2>
      <form
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (path.trim()) void add(path.trim());
        }}
      >
        <input
          type="text"
          placeholder={LUNA_CLIENT}
          value={path}
          onChange={(e) => setPath(e.target.value)}
          aria-label={t("connections.module_path")}
          data-testid="module-path"
          spellCheck={false}
        />
        <button type="button" onClick={() => void browse()}>
          {t("connections.browse")}
        </button>
        <button type="submit" className="primary" disabled={busy || !path.trim()} data-testid="module-add">
          {busy ? t("connections.loading") : t("connections.add")}
        </button>
      </form>
      <p className="muted small">{t("connections.add_hint")}</p>
      {error && <ErrorBox error={error} title={t("connections.not_added")} />}
    </section>
  );
}

export function ConnectionsView() {
  const { t } = useTranslation();
  const { connections, connectionsLoaded } = useConnections();
  const { refreshConnections } = useConnectionsActions();
  return (
    <div className="view">
      <header className="view-header">
        <h1>{t("connections.title")}</h1>
        <button onClick={() => void refreshConnections()}>{t("overview.refresh")}</button>
      </header>
      {connectionsLoaded && connections.length === 0 && (
        <EmptyState title={t("connections.no_modules")}>{t("connections.no_modules_text")}</EmptyState>
      )}
      {connections.map((c) => (
        <ModuleCard key={c.module.id} conn={c} />
      ))}
      <AddModule />
    </div>
  );
}
