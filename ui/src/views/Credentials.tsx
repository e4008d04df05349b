// Credentials and roles: change my PIN, set another role's PIN, initialize the token. The
// PIN fields are cleared as soon as a call is made; a new PIN is typed twice and checked
// against the token's length range here and again in the backend, before it is sent.
import { useEffect, useState, type ReactNode } from "react";
import type { Action, PartitionView, Permission, TokenView, UserKind } from "../bindings";
import { Badge, Dialog, ErrorBox, Field } from "../components";
import { api } from "../ipc";
import { useAuditActions, useConnectionsActions, usePartitionActions, useToast } from "../state";
import { useCommand } from "../useCommand";

export const ROLE_NAMES: Record<UserKind, string> = {
  user: "User (Crypto Officer)",
  crypto_user: "Crypto User",
  limited_crypto_officer: "Limited Crypto Officer",
  so: "Security officer",
};

export function permission(p: PartitionView | null, action: Action): Permission | undefined {
  return p?.permissions.find((x) => x.action === action);
}

/// A button for an action the role may or may not do: disabled with the reason shown.
export function RoleButton({
  perm,
  onClick,
  children,
  className,
  testId,
}: {
  perm: Permission | undefined;
  onClick: () => void;
  children: ReactNode;
  className?: string;
  testId?: string;
}) {
  const allowed = perm?.allowed ?? false;
  return (
    <span className="role-action">
      <button className={className} onClick={onClick} disabled={!allowed} title={perm?.reason ?? undefined} data-testid={testId}>
        {children}
      </button>
      {!allowed && perm?.reason && <span className="muted small role-reason">{perm.reason}</span>}
    </span>
  );
}

/// What a new PIN typed twice is missing, or null when it may be sent.
export function newPinProblem(pin: string, again: string, t: Pick<TokenView, "min_pin_len" | "max_pin_len">): string | null {
  if (!pin) return "Type the new PIN.";
  if (pin.length < t.min_pin_len) return `The token needs at least ${t.min_pin_len} characters.`;
  if (t.max_pin_len > 0 && pin.length > t.max_pin_len) return `The token accepts at most ${t.max_pin_len} characters.`;
  if (pin !== again) return "The two new PINs differ.";
  return null;
}

function useRefresh() {
  const { refreshConnections } = useConnectionsActions();
  const { refreshPartition } = usePartitionActions();
  const { refreshAudit } = useAuditActions();
  return async () => {
    await Promise.all([refreshConnections(), refreshPartition(), refreshAudit()]);
  };
}

function NewPinFields({
  pin,
  again,
  setPin,
  setAgain,
  token,
}: {
  pin: string;
  again: string;
  setPin: (s: string) => void;
  setAgain: (s: string) => void;
  token: TokenView;
}) {
  return (
    <>
      <Field label="New PIN" hint={`The token accepts ${token.min_pin_len} to ${token.max_pin_len} characters.`}>
        <input
          type="password"
          autoComplete="new-password"
          value={pin}
          onChange={(e) => setPin(e.target.value)}
          aria-label="New PIN"
          data-testid="new-pin"
        />
      </Field>
      <Field label="New PIN again">
        <input
          type="password"
          autoComplete="new-password"
          value={again}
          onChange={(e) => setAgain(e.target.value)}
          aria-label="New PIN again"
          data-testid="new-pin-again"
        />
      </Field>
    </>
  );
}

/// Change the PIN of the role logged in. `reason`: why the token wants it changed now.
export function ChangePinDialog({
  partitionId,
  token,
  user,
  reason,
  onClose,
}: {
  partitionId: string;
  token: TokenView;
  user: UserKind;
  reason?: string | null;
  onClose: () => void;
}) {
  const toast = useToast();
  const refresh = useRefresh();
  const [old, setOld] = useState("");
  const [pin, setPin] = useState("");
  const [again, setAgain] = useState("");
  const problem = newPinProblem(pin, again, token);
  const changing = useCommand(async (o: string, n: string) => {
    const r = await api.changePin(partitionId, o, n);
    toast("ok", `PIN changed (${ROLE_NAMES[user]}).`);
    if (r.audit.state === "unlocked") toast("info", "The audit trail's key is open: actions are recorded.");
    await refresh();
    onClose();
  });
  const submit = async () => {
    if (problem || !old) return;
    const [o, n] = [old, pin];
    // The fields are cleared whatever happens; the PINs live only for this one call.
    setOld("");
    setPin("");
    setAgain("");
    await changing.run(o, n);
  };
  return (
    <Dialog
      title={`Change the ${ROLE_NAMES[user]} PIN`}
      onClose={onClose}
      footer={
        <>
          <button onClick={onClose}>{reason ? "Later" : "Cancel"}</button>
          <button
            className="primary"
            onClick={() => void submit()}
            disabled={changing.loading || !old || problem !== null}
            data-testid="change-pin-submit"
          >
            {changing.loading ? "Changing…" : "Change PIN"}
          </button>
        </>
      }
    >
      {reason && (
        <div className="notice warn" data-testid="pin-must-change">
          {reason}
        </div>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <Field label="Current PIN" hint="Tried once; a wrong one uses one of the token's attempts.">
          <input
            type="password"
            autoComplete="off"
            value={old}
            onChange={(e) => setOld(e.target.value)}
            aria-label="Current PIN"
            data-testid="old-pin"
          />
        </Field>
        <NewPinFields pin={pin} again={again} setPin={setPin} setAgain={setAgain} token={token} />
        {pin && problem && (
          <p className="muted small" data-testid="pin-problem">
            {problem}
          </p>
        )}
        <button type="submit" hidden aria-hidden="true" tabIndex={-1} />
      </form>
      {changing.error && <ErrorBox error={changing.error} title="The PIN was not changed" />}
    </Dialog>
  );
}

/// The SO sets the user PIN, or the Crypto Officer a Luna role's PIN.
export function SetPinDialog({
  partitionId,
  token,
  target,
  onClose,
}: {
  partitionId: string;
  token: TokenView;
  target: "user" | "crypto_user" | "limited_crypto_officer";
  onClose: () => void;
}) {
  const toast = useToast();
  const refresh = useRefresh();
  const [pin, setPin] = useState("");
  const [again, setAgain] = useState("");
  const problem = newPinProblem(pin, again, token);
  const setting = useCommand(async (n: string) => {
    if (target === "user") await api.setUserPin(partitionId, n);
    else await api.setRolePin(partitionId, target, n);
    toast("ok", `PIN set for the ${ROLE_NAMES[target]}.`);
    await refresh();
    onClose();
  });
  const submit = async () => {
    if (problem) return;
    const n = pin;
    setPin("");
    setAgain("");
    await setting.run(n);
  };
  return (
    <Dialog
      title={`Set the ${ROLE_NAMES[target]} PIN`}
      onClose={onClose}
      footer={
        <>
          <button onClick={onClose}>Cancel</button>
          <button
            className="primary"
            onClick={() => void submit()}
            disabled={setting.loading || problem !== null}
            data-testid="set-pin-submit"
          >
            {setting.loading ? "Setting…" : "Set PIN"}
          </button>
        </>
      }
    >
      <p className="muted small">
        {target === "user"
          ? "For a new token, or to unblock a locked user PIN. On a Luna partition with policy 21 the user must change it at the next login."
          : "The Crypto Officer sets this role's PIN (CA_InitRolePIN); the role can change it afterwards."}
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <NewPinFields pin={pin} again={again} setPin={setPin} setAgain={setAgain} token={token} />
        {pin && problem && <p className="muted small">{problem}</p>}
        <button type="submit" hidden aria-hidden="true" tabIndex={-1} />
      </form>
      {setting.error && <ErrorBox error={setting.error} title="The PIN was not set" />}
    </Dialog>
  );
}

/// Initialize the token: what it holds, the SO PIN, the new label, the old label typed, and
/// for the partition holding the audit trail's key, the second confirmation.
export function InitTokenDialog({ partitionId, onClose }: { partitionId: string; onClose: () => void }) {
  const toast = useToast();
  const refresh = useRefresh();
  const { selectPartition } = usePartitionActions();
  const { run: load, data: contents, error: loadError } = useCommand(api.tokenContents);
  useEffect(() => {
    void load(partitionId);
  }, [load, partitionId]);
  const [soPin, setSoPin] = useState("");
  const [label, setLabel] = useState("");
  const [typed, setTyped] = useState("");
  const [auditToo, setAuditToo] = useState(false);
  const init = useCommand(async (pin: string) => {
    const r = await api.initToken(partitionId, pin, { label, confirmation: typed, destroy_audit_key: auditToo });
    toast("ok", `Token initialized as ${r.label}; ${r.objects_destroyed} objects destroyed. Set the user PIN next (as SO).`);
    if (r.partition_id) selectPartition(r.partition_id);
    await refresh();
    onClose();
  });
  const ready =
    contents !== null && soPin !== "" && label.trim() !== "" && typed === contents.confirmation && (!contents.holds_audit_key || auditToo);
  const submit = async () => {
    if (!ready) return;
    const pin = soPin;
    setSoPin("");
    await init.run(pin);
  };
  return (
    <Dialog
      title="Initialize the token"
      onClose={onClose}
      wide
      footer={
        <>
          <button onClick={onClose}>Cancel</button>
          <button className="danger" onClick={() => void submit()} disabled={init.loading || !ready} data-testid="init-token-submit">
            {init.loading ? "Initializing…" : "Destroy everything and initialize"}
          </button>
        </>
      }
    >
      {loadError && <ErrorBox error={loadError} />}
      {contents && (
        <>
          <p>
            <strong>{contents.label}</strong> (serial {contents.serial}) holds{" "}
            <strong data-testid="token-object-count">{contents.reported_object_count ?? contents.objects}</strong> objects
            {contents.public_only && contents.reported_object_count === null
              ? " that are visible without a login (log in to count private ones)"
              : ""}
            . Initializing destroys every one of them and the user PIN; it cannot be undone.
          </p>
          {contents.by_class.length > 0 && (
            <ul className="delete-list">
              {contents.by_class.map((c) => (
                <li key={c.class}>
                  {c.count} × {c.class.toLowerCase().replace(/_/g, " ")}
                </li>
              ))}
            </ul>
          )}
          {contents.holds_audit_key && (
            <div className="notice warn" data-testid="audit-key-warning">
              <Badge tone="bad">audit trail</Badge> This partition holds the audit trail&apos;s key. It goes with the token: the trail
              cannot be extended or checked with it afterwards.
              <label className="checkbox">
                <input type="checkbox" checked={auditToo} onChange={(e) => setAuditToo(e.target.checked)} data-testid="destroy-audit-key" />{" "}
                I understand that the audit trail&apos;s key is destroyed too.
              </label>
            </div>
          )}
          <Field label="SO PIN">
            <input type="password" autoComplete="off" value={soPin} onChange={(e) => setSoPin(e.target.value)} aria-label="SO PIN" />
          </Field>
          <Field label="New label" hint="At most 32 bytes.">
            <input type="text" value={label} onChange={(e) => setLabel(e.target.value)} aria-label="New label" maxLength={32} />
          </Field>
          <Field label={`Type “${contents.confirmation}” to confirm`}>
            <input
              type="text"
              value={typed}
              onChange={(e) => setTyped(e.target.value)}
              autoComplete="off"
              spellCheck={false}
              aria-label="Confirmation"
              data-testid="init-confirm"
            />
          </Field>
        </>
      )}
      {init.error && <ErrorBox error={init.error} title="The token was not initialized" />}
    </Dialog>
  );
}

type Open = null | { kind: "change" } | { kind: "set"; target: "user" | "crypto_user" | "limited_crypto_officer" } | { kind: "init" };

/// The Partition view's card: who is logged in, the PIN states, and the credential actions,
/// each disabled with the reason when the role may not.
export function CredentialsCard({ p }: { p: PartitionView }) {
  const [open, setOpen] = useState<Open>(null);
  const t = p.token;
  const luna = p.roles.includes("crypto_user");
  return (
    <section className="card" data-testid="credentials-card">
      <h3>Credentials and roles</h3>
      <p>
        {p.logged_in ? <Badge tone="ok">{p.role_name} logged in</Badge> : <Badge>not logged in</Badge>}{" "}
        {t.user_pin_to_be_changed && <Badge tone="warn">user PIN must be changed</Badge>}
        {t.so_pin_to_be_changed && <Badge tone="warn">SO PIN must be changed</Badge>}
        {t.user_pin_locked && <Badge tone="bad">user PIN locked</Badge>}
        {!t.user_pin_initialized && <Badge tone="warn">no user PIN yet</Badge>}
      </p>
      <p className="muted small">
        PINs of {t.min_pin_len} to {t.max_pin_len} characters. Roles offered: {p.roles.map((r) => ROLE_NAMES[r]).join(", ")}.
      </p>
      <div className="button-row wrap">
        <RoleButton perm={permission(p, "change_own_pin")} onClick={() => setOpen({ kind: "change" })} testId="change-pin">
          Change my PIN…
        </RoleButton>
        <RoleButton perm={permission(p, "set_user_pin")} onClick={() => setOpen({ kind: "set", target: "user" })} testId="set-user-pin">
          Set user PIN…
        </RoleButton>
        {luna && (
          <>
            <RoleButton
              perm={permission(p, "set_role_pin")}
              onClick={() => setOpen({ kind: "set", target: "crypto_user" })}
              testId="set-cu-pin"
            >
              Set Crypto User PIN…
            </RoleButton>
            <RoleButton perm={permission(p, "set_role_pin")} onClick={() => setOpen({ kind: "set", target: "limited_crypto_officer" })}>
              Set Limited Crypto Officer PIN…
            </RoleButton>
          </>
        )}
        <RoleButton perm={permission(p, "init_token")} onClick={() => setOpen({ kind: "init" })} className="danger" testId="init-token">
          Initialize token…
        </RoleButton>
      </div>
      {open?.kind === "change" && p.logged_in && (
        <ChangePinDialog partitionId={p.id} token={t} user={p.logged_in} onClose={() => setOpen(null)} />
      )}
      {open?.kind === "set" && <SetPinDialog partitionId={p.id} token={t} target={open.target} onClose={() => setOpen(null)} />}
      {open?.kind === "init" && <InitTokenDialog partitionId={p.id} onClose={() => setOpen(null)} />}
    </section>
  );
}
