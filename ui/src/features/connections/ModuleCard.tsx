// A loaded PKCS#11 module: its slots and tokens, log in and out, its HA groups.
import { useState } from "react";
import { useTranslation } from "react-i18next";
import type { ConnectionView, SlotView, TokenView } from "../../bindings";
import { Badge, EmptyState, ErrorBox } from "../../components";
import i18n from "../../i18n";
import { api } from "../../ipc";
import { useConnectionsActions, useNavigate, usePartition, usePartitionActions, useToast } from "../../state";
import { useCommand } from "../../useCommand";
import { HaGroupsOfModule } from "../ha/Ha";
import { useRefresh } from "../credentials/useRefresh";
import { LoginDialog } from "./LoginDialog";

export function pinFlags(t: TokenView) {
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

/// After a login or logout: the slots' PIN flags, the partition's login state, the audit key.
export function SlotRow({ slot, moduleBuiltin, luna }: { slot: SlotView; moduleBuiltin: boolean; luna: boolean }) {
  const { t: tr } = useTranslation();
  const { partitionId, partition } = usePartition();
  const { selectPartition } = usePartitionActions();
  const navigate = useNavigate();
  const toast = useToast();
  const refresh = useRefresh();
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

export function ModuleCard({ conn }: { conn: ConnectionView }) {
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
