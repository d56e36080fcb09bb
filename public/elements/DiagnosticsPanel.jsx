import { createContext, useContext, useEffect, useRef, useState } from "react";

// Admin diagnostics: polls the JSON API itself (so closing the side bar keeps it closed).
// Every log text is rendered as React text, never as HTML.
// The data-testid, data-* and role/aria attributes are a supported interface for scripts (README,
// "Scripted UI tests"): they never depend on the display language; changing one is a breaking change.

const STATE_COLORS = {
  ready: "#16a34a", attached: "#2563eb", starting: "#d97706", preparing: "#d97706",
  restarting: "#d97706", stopping: "#6b7280", crashed: "#dc2626", failed: "#dc2626",
  stopped: "#6b7280", idle: "#6b7280", degraded: "#dc2626",
};
const SEVERITY_COLORS = { critical: "#dc2626", error: "#ea580c", warning: "#ca8a04" };
const LEVEL_COLORS = { ERROR: "#f87171", CRITICAL: "#f87171", WARNING: "#fbbf24" };

const box = { border: "1px solid rgba(128,128,128,0.35)", borderRadius: 8, padding: 10, marginBottom: 10 };
const mono = { fontFamily: "ui-monospace, SFMono-Regular, Menlo, monospace", fontSize: 11.5 };
const small = { fontSize: 12, opacity: 0.8 };
const heading = { fontWeight: 600, fontSize: 13, margin: "0 0 6px 0" };
// A keyboard user must see where the focus is on every control of the panel, whatever the theme.
// Colour marks a line, never its text (text keeps the theme's contrast, in light and dark themes alike).
const flagged = (color) => ({ borderLeft: `3px solid ${color}`, paddingLeft: 6, marginTop: 6, opacity: 1 });
const FOCUS_STYLE = "[data-testid=diag-panel] :focus-visible { outline: 2px solid #2563eb; outline-offset: 2px; }";

function ago(now, t) {
  if (!t) return "";
  const s = Math.max(0, Math.round(now - t));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  return `${Math.round(s / 3600)} h ago`;
}

function duration(seconds) {
  if (seconds === null || seconds === undefined) return "–";
  const s = Math.round(seconds);
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${Math.round(s / 3600)} h`;
}

function Sparkline({ values, color, height = 28, width = 140 }) {
  if (!values || values.length < 2) return <svg width={width} height={height} />;
  const max = Math.max(1e-9, ...values);
  const step = width / (values.length - 1);
  const points = values.map((v, i) => `${(i * step).toFixed(1)},${(height - 2 - (v / max) * (height - 4)).toFixed(1)}`);
  return (
    <svg width={width} height={height} aria-hidden="true">
      <polyline points={points.join(" ")} fill="none" stroke={color} strokeWidth="1.5" />
    </svg>
  );
}

function Engine({ engine }) {
  const color = STATE_COLORS[engine.state] || "#6b7280";
  const rows = [
    ["model", engine.served_model_name || engine.model],
    ["mode", engine.mode],
    ["version", engine.version],
    engine.process_control ? ["port", engine.port] : null,
    engine.process_control ? ["pid", engine.pid] : null,
    ["uptime", engine.uptime !== null ? duration(engine.uptime) : "–"],
    engine.process_control ? ["restarts", engine.restarts] : null,
    engine.startup_seconds ? ["start-up", `${engine.startup_seconds} s`] : null,
    engine.rss_mib ? ["vLLM memory", `${engine.rss_mib} MiB`] : null,
    ["app memory", engine.app_rss_mib ? `${engine.app_rss_mib} MiB` : null],
  ].filter(Boolean);
  return (
    <div style={box} id="diag-engine" data-testid="diag-engine" role="region" aria-label="Engine">
      <div style={{ display: "flex", alignItems: "center", gap: 8, marginBottom: 6 }}>
        <span style={{ width: 10, height: 10, borderRadius: 5, background: color, display: "inline-block" }} />
        <span style={{ fontWeight: 600 }}>Engine</span>
        <span id="diag-engine-state" data-testid="diag-engine-state" data-state={engine.state} role="status"
          style={{ fontWeight: 600 }}>{engine.state}</span>
      </div>
      <div style={{ display: "grid", gridTemplateColumns: "auto 1fr", columnGap: 10, rowGap: 2, ...small }}>
        {rows.map(([k, v]) => (
          <div key={k} style={{ display: "contents" }} data-testid="diag-engine-fact" data-name={k}>
            <span>{k}</span>
            <span style={mono}>{v === null || v === undefined || v === "" ? "–" : String(v)}</span>
          </div>
        ))}
      </div>
      {engine.progress && engine.state !== "ready" ? <div data-testid="diag-engine-progress" style={{ ...small, marginTop: 6 }}>{engine.progress}</div> : null}
      {engine.error ? <div data-testid="diag-engine-error" role="alert" style={{ ...small, ...flagged("#dc2626") }}>{engine.error}</div> : null}
      {engine.notice ? <div data-testid="diag-engine-notice" style={{ ...small, ...flagged("#d97706") }}>{engine.notice}</div> : null}
    </div>
  );
}

// Why a finding has its kind: a rule's pattern, the exception's type, the code it was raised in, or only
// the phase the server was in (an error no rule names).
const BASIS_TEXT = {
  rule: "a rule",
  exception_type: "the exception's type",
  raised_in: "where it was raised",
  phase: "the phase (no rule names this error)",
};
const SOURCE_TEXT = { log: "engine log", chat: "chat's own request", probe: "server probe", preflight: "preflight" };

function FindingCard({ f, now }) {
  const color = f.resolved ? "#6b7280" : SEVERITY_COLORS[f.severity] || "#ea580c";
  return (
    <div className="diag-finding" data-testid="diag-finding" data-kind={f.kind} data-severity={f.severity}
      data-resolved={f.resolved ? "yes" : "no"} data-source={f.source} data-basis={f.basis}
      role="article" aria-label={`${f.kind}: ${f.title}`}
      style={{ ...box, borderLeft: `4px solid ${color}`, opacity: f.resolved ? 0.7 : 1 }}>
      <div style={{ display: "flex", justifyContent: "space-between", gap: 6 }}>
        <span data-testid="diag-finding-title" style={{ fontWeight: 600 }}>{f.title}</span>
        <span style={{ ...small, whiteSpace: "nowrap" }}>{f.resolved ? "resolved" : f.severity}</span>
      </div>
      <div style={small}>
        <span style={mono}>{f.kind}</span> · seen {f.count}× · last {ago(now, f.last_seen)}
      </div>
      <div className="diag-basis" data-testid="diag-basis" style={small}>
        named by {BASIS_TEXT[f.basis] || f.basis}{f.rule ? <> (<span style={mono}>{f.rule}</span>)</> : null}
        {" "}· seen in the {SOURCE_TEXT[f.source] || f.source}
      </div>
      {f.evidence.map((e, i) => (
        <div key={i} data-testid="diag-evidence" data-source={e.source} style={{ ...mono, background: "rgba(128,128,128,0.12)", padding: "3px 5px", marginTop: 4,
          borderRadius: 4, whiteSpace: "pre-wrap", wordBreak: "break-word" }}>
          {e.source === "log" ? `line ${e.line}: ` : `${e.source}: `}{e.text}
        </div>
      ))}
      {f.hint ? <div data-testid="diag-fix" style={{ marginTop: 6, fontSize: 12.5 }}><b>Fix:</b> {f.hint}</div> : null}
      {f.fix && f.fix.length ? (
        <details data-testid="diag-fix-steps" style={{ marginTop: 4, fontSize: 12 }}>
          <summary>All fix steps</summary>
          <ol style={{ margin: "4px 0 0 18px", padding: 0 }}>{f.fix.map((s, i) => <li key={i}>{s}</li>)}</ol>
        </details>
      ) : null}
      <RemedyControls f={f} />
    </div>
  );
}

function Metrics({ metrics }) {
  const h = metrics.history || [];
  const items = [
    ["running", metrics.running ?? "–"],
    ["waiting", metrics.waiting ?? "–"],
    ["tokens/s", metrics.generation_tokens_per_s ?? "–"],
    ["KV cache", metrics.kv_cache_usage !== undefined ? `${(metrics.kv_cache_usage * 100).toFixed(1)} %` : "–"],
    ["mean TTFT", metrics.mean_ttft_s ? `${(metrics.mean_ttft_s * 1000).toFixed(0)} ms` : "–"],
  ];
  return (
    <div style={box} id="diag-metrics" data-testid="diag-metrics" role="region" aria-label="Metrics">
      <p style={heading}>Metrics</p>
      <div style={{ display: "flex", flexWrap: "wrap", gap: 12, ...small }}>
        {items.map(([k, v]) => <div key={k} data-testid="diag-metric" data-name={k}><div>{k}</div><div style={{ ...mono, fontSize: 14 }}>{String(v)}</div></div>)}
      </div>
      <div style={{ display: "flex", gap: 16, marginTop: 6, ...small }}>
        <div>tokens/s<br /><Sparkline values={h.map((p) => p.tps)} color="#2563eb" /></div>
        <div>requests<br /><Sparkline values={h.map((p) => p.running + p.waiting)} color="#16a34a" /></div>
      </div>
    </div>
  );
}

function LogTail({ lines }) {
  const [follow, setFollow] = useState(true);
  const [frozen, setFrozen] = useState(null);
  const [level, setLevel] = useState("all");
  const [text, setText] = useState("");
  const scroller = useRef(null);
  const shown = (follow ? lines : frozen || lines).filter((l) =>
    (level === "all" || l.level === level || (level === "WARNING" && l.level === "ERROR")) &&
    (!text || l.text.toLowerCase().includes(text.toLowerCase())));
  useEffect(() => {
    // Scroll only the log box (scrollIntoView would scroll the whole side bar too).
    if (follow && scroller.current) scroller.current.scrollTop = scroller.current.scrollHeight;
  }, [lines, follow]);
  return (
    <div style={box} id="diag-log" data-testid="diag-log" role="region" aria-label="Log">
      <div style={{ display: "flex", gap: 6, alignItems: "center", marginBottom: 6, flexWrap: "wrap" }}>
        <span style={{ fontWeight: 600, fontSize: 13 }}>Log</span>
        <button id="diag-follow" data-testid="diag-log-follow" aria-pressed={!follow} onClick={() => { setFrozen(lines); setFollow(!follow); }}
          style={{ ...small, border: "1px solid rgba(128,128,128,0.5)", borderRadius: 4, padding: "1px 6px" }}>
          {follow ? "Pause" : "Follow"}
        </button>
        <select id="diag-level" data-testid="diag-log-level" aria-label="Log level" value={level} onChange={(e) => setLevel(e.target.value)}
          style={{ ...small, background: "transparent", border: "1px solid rgba(128,128,128,0.5)", borderRadius: 4 }}>
          <option value="all">all levels</option>
          <option value="INFO">INFO</option>
          <option value="WARNING">WARNING+</option>
          <option value="ERROR">ERROR</option>
        </select>
        <input id="diag-filter" data-testid="diag-log-filter" aria-label="Filter the log" placeholder="filter" value={text} onChange={(e) => setText(e.target.value)}
          style={{ ...small, flex: 1, minWidth: 60, background: "transparent", border: "1px solid rgba(128,128,128,0.5)",
            borderRadius: 4, padding: "1px 4px" }} />
      </div>
      <div ref={scroller} data-testid="diag-log-lines" role="log" aria-label="vLLM log lines" tabIndex={0}
        style={{ ...mono, maxHeight: 320, overflowY: "auto", whiteSpace: "pre-wrap", wordBreak: "break-word" }}>
        {shown.map((l, i) => (
          <div key={`${l.n}-${i}`} className="diag-log-line" data-testid="diag-log-line" data-level={l.level}
            data-n={l.n} style={LEVEL_COLORS[l.level] ? { borderLeft: `3px solid ${LEVEL_COLORS[l.level]}`, paddingLeft: 4 } : null}>
            <span style={{ opacity: 0.75 }}>{l.n} </span>{l.text}
          </div>
        ))}
      </div>
    </div>
  );
}

// -- Health probe and launch records (issue 13, items 4 and 5): kept in their own components ------------------

function HealthProbe({ probe, now }) {
  if (!probe || !probe.interval) return null;
  const last = probe.last;
  return (
    <div style={box} data-testid="diag-probe" data-degraded={probe.degraded ? "yes" : "no"}>
      <p style={heading}>Completion probe</p>
      <div style={small}>
        {probe.degraded
          ? `Degraded: ${probe.failures_in_a_row} probe completion(s) failed in a row while /health answers.`
          : "A one-token completion checks the engine while the chat is idle."}
        {" "}Every {probe.interval} s when idle
        {probe.restart_after ? `; restart after ${probe.restart_after} failed probe(s)` : "; no automatic restart"}.
      </div>
      {last ? (
        <div data-testid="diag-probe-last" data-ok={last.ok ? "yes" : "no"} style={{ ...small, marginTop: 4 }}>
          Last probe {ago(now, last.at)}: {last.ok ? "answered" : "failed"} in {last.seconds} s
          {last.ok ? null : <div style={{ ...mono, whiteSpace: "pre-wrap", wordBreak: "break-word" }}>{last.detail}</div>}
        </div>
      ) : null}
    </div>
  );
}

function LaunchDetail({ api, id }) {
  const [record, setRecord] = useState(null);
  const [error, setError] = useState(null);
  const lines = useRef(null);
  useEffect(() => {  // the last lines matter most: show the end of the box first
    if (lines.current) lines.current.scrollTop = lines.current.scrollHeight;
  }, [record]);
  useEffect(() => {
    let stopped = false;
    fetch(`${api}/launches/${encodeURIComponent(id)}`, { credentials: "include", cache: "no-store" })
      .then((r) => (r.ok ? r.json() : Promise.reject(new Error(`HTTP ${r.status}`))))
      .then((data) => { if (!stopped) setRecord(data); })
      .catch((e) => { if (!stopped) setError(String(e.message || e)); });
    return () => { stopped = true; };
  }, [api, id]);
  if (error) return <div style={{ ...small, color: "#dc2626" }}>Cannot load the record: {error}</div>;
  if (!record) return <div style={small}>Loading the record…</div>;
  const overrides = Object.entries(record.overrides || {});
  return (
    <div data-testid="diag-launch-detail" style={{ marginTop: 4 }}>
      <div style={small}>Command line</div>
      <div data-testid="diag-launch-command" style={{ ...mono, whiteSpace: "pre-wrap", wordBreak: "break-all" }}>
        {(record.command || []).join(" ")}
      </div>
      {overrides.length ? (
        <div style={{ ...small, marginTop: 4 }}>
          Overrides: <span style={mono}>{overrides.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ")}</span>
        </div>
      ) : null}
      {(record.findings || []).length ? (
        <div data-testid="diag-launch-findings" style={{ ...small, marginTop: 4 }}>
          Findings then: {record.findings.map((f) => (f.rule ? `${f.kind} (${f.rule})` : f.kind)).join(", ")}
        </div>
      ) : null}
      <div style={{ ...small, marginTop: 4 }}>Last {(record.last_lines || []).length} log lines</div>
      <div data-testid="diag-launch-lines" ref={lines}
        style={{ ...mono, maxHeight: 240, overflowY: "auto", whiteSpace: "pre-wrap", wordBreak: "break-word" }}>
        {(record.last_lines || []).map((line, i) => <div key={i}>{line}</div>)}
      </div>
    </div>
  );
}

function LaunchEntry({ api, launch, now, startOpen }) {
  const [open, setOpen] = useState(startOpen);
  useEffect(() => { if (startOpen) setOpen(true); }, [startOpen]);  // the crash loop's record opens itself
  const when = launch.ended ? `ended ${ago(now, launch.ended)}` : `started ${ago(now, launch.started)}`;
  return (
    <details data-testid="diag-launch" data-exit={launch.exit} data-launch-id={launch.id}
      data-gave-up={launch.gave_up ? "yes" : "no"} open={open}
      onToggle={(e) => setOpen(e.currentTarget.open)} style={{ marginTop: 4, fontSize: 12 }}>
      <summary>
        <span style={mono}>#{launch.launch}</span> {when}:{" "}
        <span data-testid="diag-launch-cause" style={{ color: launch.ended && launch.exit !== "stopped" ? "#dc2626" : undefined }}>
          {launch.cause}
        </span>
      </summary>
      {open ? <LaunchDetail api={api} id={launch.id} /> : null}
    </details>
  );
}

function Launches({ api, launches, engine, now }) {
  if (!launches || !launches.length) return null;
  const gaveUp = engine.state === "failed" && launches[0].gave_up;
  return (
    <div style={box} data-testid="diag-launches">
      <p style={heading}>Launches ({launches.length})</p>
      {gaveUp ? (
        <div data-testid="diag-crash-loop" role="alert" style={{ ...small, color: "#dc2626", marginBottom: 4 }}>
          vLLM gave up after repeated failed starts. The last launch: {launches[0].cause}
        </div>
      ) : null}
      {launches.map((l, i) => <LaunchEntry key={l.id} api={api} launch={l} now={now} startOpen={gaveUp && i === 0} />)}
    </div>
  );
}

// -- Remedies (issue 13): "Apply fix" on a finding's card, the overrides in force with "Undo". ---------------
// The POSTs carry the page's credentials; the server checks the admin role and the origin, and answers once
// vLLM was restarted and a test completion verified the fix (or not). The card's state comes from the API, so
// it survives a reload of the page while vLLM restarts.
const RemedyBus = createContext({ running: null });
const button = { fontSize: 12, border: "1px solid rgba(128,128,128,0.6)", borderRadius: 4, padding: "2px 8px",
  cursor: "pointer", background: "transparent" };
const OUTCOME_COLORS = { running: "#d97706", verified: "#16a34a", failed: "#dc2626" };

async function postJson(path, body) {
  let response;
  try {
    response = await fetch(path, { method: "POST", credentials: "include", cache: "no-store",
      headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  } catch (e) {
    return { ok: false, message: "The app cannot be reached." };
  }
  let data = null;
  try { data = await response.json(); } catch (e) { data = null; }
  if (!response.ok) {
    const detail = data && typeof data.detail === "string" ? data.detail : `The app answered ${response.status}.`;
    return { ok: false, message: detail, data };
  }
  return { ok: true, data };
}

function changeText(overrides, previous) {
  return Object.entries(overrides || {})
    .map(([k, v]) => `${k} ${previous && previous[k] !== null && previous[k] !== undefined ? previous[k] : "(unset)"} → ${v}`)
    .join(", ");
}

function RemedyOutcome({ outcome }) {
  if (!outcome) return null;
  const who = outcome.auto ? " (automatic)" : "";
  const text = outcome.state === "running"
    ? `Applying ${outcome.remedy}${who}: restarting vLLM and verifying with a test completion…`
    : outcome.state === "verified"
      ? `Fixed by ${outcome.remedy}${who}: verified by a test completion${outcome.seconds ? ` (${outcome.seconds} s)` : ""}.`
      : `Not fixed by ${outcome.remedy}${who}: ${(outcome.evidence || []).join("; ") || "see the log"}`;
  return (
    <div data-testid="diag-remedy-state" data-state={outcome.state} data-remedy={outcome.remedy} role="status"
      style={{ marginTop: 6, fontSize: 12.5, fontWeight: 600, color: OUTCOME_COLORS[outcome.state],
        whiteSpace: "pre-wrap", wordBreak: "break-word" }}>
      {text}
    </div>
  );
}

function ConfirmRisk({ proposal, onConfirm, onCancel }) {
  return (
    <div data-testid="diag-remedy-confirm" role="alertdialog" aria-modal="true" aria-labelledby="diag-remedy-confirm-title"
      style={{ ...box, marginTop: 6, borderColor: "#dc2626" }}>
      <div id="diag-remedy-confirm-title" style={{ fontWeight: 600 }}>This fix is not safe: {proposal.changes}</div>
      <div data-testid="diag-remedy-risk" style={{ fontSize: 12.5, margin: "4px 0" }}>{proposal.risk}</div>
      <div style={{ display: "flex", gap: 6 }}>
        <button data-testid="diag-remedy-confirm-apply" aria-label={`Apply ${proposal.id} despite the risk`}
          style={{ ...button, borderColor: "#dc2626", color: "#dc2626" }} onClick={onConfirm}>Apply anyway</button>
        <button data-testid="diag-remedy-confirm-cancel" aria-label="Cancel" style={button} onClick={onCancel}>Cancel</button>
      </div>
    </div>
  );
}

function RemedyControls({ f }) {
  const bus = useContext(RemedyBus);
  const [asking, setAsking] = useState(null);
  const [sent, setSent] = useState(null);
  const [message, setMessage] = useState(null);
  const proposals = f.remedies || [];
  const outcome = f.remedy_outcome || sent;
  if (!proposals.length && !outcome && !message) return null;
  const busy = Boolean(bus.running) || (outcome && outcome.state === "running");
  const apply = async (proposal, confirm) => {
    setAsking(null);
    setMessage(null);
    setSent({ state: "running", remedy: proposal.id, auto: false });
    const result = await postJson("/api/remedies/apply", { finding: f.id, remedy: proposal.id, confirm: Boolean(confirm) });
    if (!result.ok) {
      setSent(null);
      setMessage(result.message);
      return;
    }
    const r = result.data;
    setSent({ state: r.fixed ? "verified" : "failed", remedy: proposal.id, seconds: r.seconds, evidence: r.evidence,
      auto: false });
  };
  return (
    <div data-testid="diag-remedies" style={{ marginTop: 6 }}>
      <RemedyOutcome outcome={outcome} />
      {f.resolved ? null : proposals.map((p) => (
        <div key={p.id} data-testid="diag-remedy" data-remedy={p.id} data-safe={p.safe ? "yes" : "no"}
          style={{ marginTop: 6, fontSize: 12.5 }}>
          <div><b>Remedy:</b> <span style={mono}>{changeText(p.overrides, p.previous)}</span>{p.safe ? "" : " (not safe)"}</div>
          <div style={small}>{p.why} {p.reason}</div>
          <button data-testid="diag-remedy-apply" data-remedy={p.id} aria-label={`Apply fix ${p.id}`} disabled={busy}
            style={{ ...button, marginTop: 4, opacity: busy ? 0.5 : 1 }}
            onClick={() => (p.safe ? apply(p, false) : setAsking(p))}>
            Apply fix
          </button>
          {asking && asking.id === p.id ? (
            <ConfirmRisk proposal={p} onConfirm={() => apply(p, true)} onCancel={() => setAsking(null)} />
          ) : null}
        </div>
      ))}
      {message ? <div data-testid="diag-remedy-error" role="alert" style={{ ...small, color: "#dc2626", marginTop: 4 }}>{message}</div> : null}
    </div>
  );
}

function Overrides({ overrides, remedies }) {
  const [pending, setPending] = useState(null);
  const [message, setMessage] = useState(null);
  const list = (overrides && overrides.overrides) || [];
  const running = remedies && remedies.running;
  const undo = async (remedy) => {
    setPending(remedy);
    setMessage(null);
    const result = await postJson("/api/remedies/undo", { remedy });
    setPending(null);
    if (!result.ok) setMessage(result.message);
    else if (result.data.fixed) setMessage(`Undone: ${remedy}. vLLM answered with the previous settings.`);
    else setMessage(`Undone: ${remedy}. With the previous settings vLLM does not answer: ${(result.data.evidence || []).join("; ")}`);
  };
  return (
    <div style={box} data-testid="diag-overrides" aria-label="Overrides">
      <p style={heading}>Overrides {remedies ? <span style={{ ...small, fontWeight: 400 }}>· automatic fixes: {remedies.auto}</span> : null}</p>
      {running ? (
        <div data-testid="diag-remedy-running" role="status" style={{ ...small, color: OUTCOME_COLORS.running }}>
          {running.action === "undo" ? "Undoing" : "Applying"} {running.remedy}{running.auto ? " (automatic)" : ""}: vLLM is restarting…
        </div>
      ) : null}
      {overrides && overrides.problem ? <div style={{ ...small, color: "#dc2626" }}>{overrides.problem}</div> : null}
      {list.length === 0 ? <div style={small} data-testid="diag-no-overrides">No overrides: vLLM runs with the configured settings.</div> : null}
      {list.map((o) => (
        <div key={o.field} data-testid="diag-override" data-remedy={o.remedy} data-field={o.field}
          data-auto={o.auto ? "yes" : "no"} style={{ marginTop: 6, fontSize: 12.5 }}>
          <div style={{ display: "flex", justifyContent: "space-between", gap: 6, alignItems: "center" }}>
            <span><span style={mono}>{o.field}: {String(o.previous)} → {String(o.value)}</span>
              {" "}<span style={small}>({o.auto ? "auto" : "by an admin"})</span></span>
            <button data-testid="diag-remedy-undo" data-remedy={o.remedy} aria-label={`Undo ${o.remedy}`}
              disabled={Boolean(running) || Boolean(pending)} style={{ ...button, opacity: running || pending ? 0.5 : 1 }}
              onClick={() => undo(o.remedy)}>
              {pending === o.remedy ? "Undoing…" : "Undo"}
            </button>
          </div>
          <div style={small}>
            set by <span style={mono}>{o.remedy}</span> for <span style={mono}>{o.finding_kind}</span>
            {o.finding_line ? ` (line ${o.finding_line})` : ""}: {o.finding_text}
          </div>
        </div>
      ))}
      {message ? <div data-testid="diag-undo-result" role="status" style={{ ...small, marginTop: 6 }}>{message}</div> : null}
    </div>
  );
}

export default function DiagnosticsPanel() {
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);
  const api = (props && props.api) || "/api/diagnostics";
  const interval = (props && props.interval) || 1000;

  useEffect(() => {
    let stopped = false;
    let timer = null;
    const poll = async () => {
      try {
        const response = await fetch(api, { credentials: "include", cache: "no-store" });
        if (response.status === 401) setError("Log in again to see diagnostics.");
        else if (response.status === 403) setError("Diagnostics are for admins only.");
        else if (!response.ok) setError(`The diagnostics API answered ${response.status}.`);
        else { setData(await response.json()); setError(null); }
      } catch (e) {
        setError("The app cannot be reached.");
      }
      if (!stopped) timer = setTimeout(poll, interval);
    };
    poll();
    return () => { stopped = true; if (timer) clearTimeout(timer); };
  }, [api, interval]);

  if (!data) return <div data-testid="diag-loading" role="status" style={{ padding: 8, ...small }}>{error || "Loading diagnostics…"}</div>;
  const onTop = (f) => !f.resolved || Boolean(f.remedy_outcome); // a card a remedy was tried on stays in view
  const open = data.findings.filter(onTop);
  const resolved = data.findings.filter((f) => !onTop(f));
  const now = data.engine.now || Date.now() / 1000;
  return (
    <RemedyBus.Provider value={{ running: (data.remedies && data.remedies.running) || null }}>
    <div id="diagnostics-panel" data-testid="diag-panel" role="region" aria-label="Diagnostics"
      style={{ padding: 4, fontSize: 13 }}>
      <style>{FOCUS_STYLE}</style>
      {error ? <div data-testid="diag-error" role="alert" style={{ ...small, ...flagged("#dc2626") }}>{error}</div> : null}
      <Engine engine={data.engine} />
      <Launches api={api} launches={data.launches} engine={data.engine} now={now} />
      <HealthProbe probe={data.probe} now={now} />
      <div style={box} id="diag-findings" data-testid="diag-findings" role="region" aria-label="Findings">
        <p style={heading}>Findings {open.length ? `(${open.filter((f) => !f.resolved).length} open)` : ""}</p>
        {open.length === 0 ? <div style={small} id="diag-no-findings" data-testid="diag-no-findings">No open findings: nothing wrong seen so far.</div> : null}
        {open.map((f) => <FindingCard key={f.id} f={f} now={now} />)}
        {resolved.length ? (
          <details>
            <summary data-testid="diag-resolved" style={small}>{resolved.length} resolved</summary>
            {resolved.map((f) => <FindingCard key={f.id} f={f} now={now} />)}
          </details>
        ) : null}
      </div>
      <Overrides overrides={data.overrides} remedies={data.remedies} />
      <Metrics metrics={data.metrics} />
      <LogTail lines={data.log_tail} />
    </div>
    </RemedyBus.Provider>
  );
}
