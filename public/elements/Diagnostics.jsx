import { Fragment, createContext, useContext, useEffect, useRef, useState } from "react";

// Admin diagnostics: polls the JSON API itself (so closing the side bar keeps it closed).
// Every log text is rendered as React text, never as HTML.
// The data-testid, data-* and role/aria attributes are a supported interface for scripts (README,
// "Scripted UI tests"): they never depend on the display language; changing one is a breaking change.
// The panel's own words come from the app's catalogue (the `panel.ui.*` keys) in the reader's language: first
// from the element's props (the chat session's language), then from every poll's `labels`. None is written here.
const Labels = createContext({});

function fill(template, params) {
  // "{name}" -> params.name; the pieces stay apart so a value may be a React node (a monospace id).
  const parts = String(template).split(/(\{[a-z_]+\})/);
  return parts.map((part) => {
    const m = /^\{([a-z_]+)\}$/.exec(part);
    return m && params && params[m[1]] !== undefined && params[m[1]] !== null ? params[m[1]] : part;
  });
}

function textOf(labels) {
  const text = (key, params) => fill(labels[key] !== undefined ? labels[key] : key, params).join("");
  text.nodes = (key, params) => fill(labels[key] !== undefined ? labels[key] : key, params)
    .map((piece, i) => <Fragment key={i}>{piece}</Fragment>);
  return text;
}

function useText() {
  return textOf(useContext(Labels));
}

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

function ago(text, now, t) {
  if (!t) return "";
  const s = Math.max(0, Math.round(now - t));
  if (s < 60) return text("ago_s", { n: s });
  if (s < 3600) return text("ago_min", { n: Math.round(s / 60) });
  return text("ago_h", { n: Math.round(s / 3600) });
}

function duration(text, seconds) {
  if (seconds === null || seconds === undefined) return "–";
  const s = Math.round(seconds);
  if (s < 120) return text("dur_s", { n: s });
  if (s < 7200) return text("dur_min", { n: Math.round(s / 60) });
  return text("dur_h", { n: Math.round(s / 3600) });
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
  const text = useText();
  const color = STATE_COLORS[engine.state] || "#6b7280";
  const rows = [
    [text("row.model"), engine.served_model_name || engine.model],
    [text("row.mode"), engine.mode],
    [text("row.version"), engine.version],
    engine.process_control ? [text("row.port"), engine.port] : null,
    engine.process_control ? [text("row.pid"), engine.pid] : null,
    [text("row.uptime"), engine.uptime !== null ? duration(text, engine.uptime) : "–"],
    engine.process_control ? [text("row.restarts"), engine.restarts] : null,
    engine.startup_seconds ? [text("row.startup"), text("dur_s", { n: engine.startup_seconds })] : null,
    engine.rss_mib ? [text("row.vllm_memory"), `${engine.rss_mib} MiB`] : null,
    [text("row.app_memory"), engine.app_rss_mib ? `${engine.app_rss_mib} MiB` : null],
  ].filter(Boolean);
  const stateKey = `state.${engine.state}`;
  return (
    <div style={box} id="diag-engine" data-testid="diag-engine" role="region" aria-label={text("engine")}>
      <div style={{ display: "flex", alignItems: "center", gap: 8, marginBottom: 6 }}>
        <span style={{ width: 10, height: 10, borderRadius: 5, background: color, display: "inline-block" }} />
        <span style={{ fontWeight: 600 }}>{text("engine")}</span>
        <span id="diag-engine-state" data-testid="diag-engine-state" data-state={engine.state} role="status"
          style={{ fontWeight: 600 }}>{text(stateKey) === stateKey ? engine.state : text(stateKey)}</span>
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

// Why a finding has its kind (labels basis.*): a rule's pattern, the exception's type, the code it was raised
// in, or only the phase the server was in (an error no rule names). Where it was seen: labels source.*.
function known(text, key, fallback) {
  const shown = text(key);
  return shown === key ? fallback : shown;
}

function FindingCard({ f, now }) {
  const text = useText();
  const color = f.resolved ? "#6b7280" : SEVERITY_COLORS[f.severity] || "#ea580c";
  return (
    <div className="diag-finding" data-testid="diag-finding" data-kind={f.kind} data-severity={f.severity}
      data-resolved={f.resolved ? "yes" : "no"} data-source={f.source} data-basis={f.basis}
      role="article" aria-label={`${f.kind}: ${f.title}`}
      style={{ ...box, borderLeft: `4px solid ${color}`, opacity: f.resolved ? 0.7 : 1 }}>
      <div style={{ display: "flex", justifyContent: "space-between", gap: 6 }}>
        <span data-testid="diag-finding-title" style={{ fontWeight: 600 }}>{f.title}</span>
        <span style={{ ...small, whiteSpace: "nowrap" }}>{f.resolved ? text("resolved") : known(text, `severity.${f.severity}`, f.severity)}</span>
      </div>
      <div style={small}>
        <span style={mono}>{f.kind}</span> · {text("seen", { count: f.count, ago: ago(text, now, f.last_seen) })}
      </div>
      <div className="diag-basis" data-testid="diag-basis" style={small}>
        {text("named_by", { basis: known(text, `basis.${f.basis}`, f.basis) })}
        {f.rule ? <> (<span style={mono}>{f.rule}</span>)</> : null}
        {" "}· {text("seen_in", { source: known(text, `source.${f.source}`, f.source) })}
      </div>
      {f.seen_by ? (
        <div data-testid="diag-seen-by" style={small}>
          {text("seen_by", { processes: f.seen_by.map((s) => `${s.process} (${s.count}×)`).join(", ") })}
        </div>
      ) : null}
      {f.evidence.map((e, i) => (
        <div key={i} data-testid="diag-evidence" data-source={e.source} style={{ ...mono, background: "rgba(128,128,128,0.12)", padding: "3px 5px", marginTop: 4,
          borderRadius: 4, whiteSpace: "pre-wrap", wordBreak: "break-word" }}>
          {e.process ? `[${e.process}] ` : ""}{e.source === "log" ? text("evidence_line", { line: e.line }) : `${e.source}: `}{e.text}
        </div>
      ))}
      {f.hint ? <div data-testid="diag-fix" style={{ marginTop: 6, fontSize: 12.5 }}><b>{text("fix")}</b>{f.hint}</div> : null}
      {f.fix && f.fix.length ? (
        <details data-testid="diag-fix-steps" style={{ marginTop: 4, fontSize: 12 }}>
          <summary>{text("all_fix_steps")}</summary>
          <ol style={{ margin: "4px 0 0 18px", padding: 0 }}>{f.fix.map((s, i) => <li key={i}>{s}</li>)}</ol>
        </details>
      ) : null}
      <RemedyControls f={f} />
    </div>
  );
}

function Metrics({ metrics }) {
  const text = useText();
  const h = metrics.history || [];
  const items = [
    [text("metric.running"), metrics.running ?? "–"],
    [text("metric.waiting"), metrics.waiting ?? "–"],
    [text("metric.tokens_per_s"), metrics.generation_tokens_per_s ?? "–"],
    [text("metric.kv_cache"), metrics.kv_cache_usage !== undefined ? `${(metrics.kv_cache_usage * 100).toFixed(1)} %` : "–"],
    [text("metric.mean_ttft"), metrics.mean_ttft_s ? `${(metrics.mean_ttft_s * 1000).toFixed(0)} ms` : "–"],
  ];
  return (
    <div style={box} id="diag-metrics" data-testid="diag-metrics" role="region" aria-label={text("metrics")}>
      <p style={heading}>{text("metrics")}</p>
      <div style={{ display: "flex", flexWrap: "wrap", gap: 12, ...small }}>
        {items.map(([k, v]) => <div key={k} data-testid="diag-metric" data-name={k}><div>{k}</div><div style={{ ...mono, fontSize: 14 }}>{String(v)}</div></div>)}
      </div>
      <div style={{ display: "flex", gap: 16, marginTop: 6, ...small }}>
        <div>{text("metric.tokens_per_s")}<br /><Sparkline values={h.map((p) => p.tps)} color="#2563eb" /></div>
        <div>{text("metric.requests")}<br /><Sparkline values={h.map((p) => p.running + p.waiting)} color="#16a34a" /></div>
      </div>
    </div>
  );
}

function LogTail({ lines }) {
  const text = useText();
  const [follow, setFollow] = useState(true);
  const [frozen, setFrozen] = useState(null);
  const [level, setLevel] = useState("all");
  const [filter, setFilter] = useState("");
  const scroller = useRef(null);
  const shown = (follow ? lines : frozen || lines).filter((l) =>
    (level === "all" || l.level === level || (level === "WARNING" && l.level === "ERROR")) &&
    (!filter || l.text.toLowerCase().includes(filter.toLowerCase())));
  useEffect(() => {
    // Scroll only the log box (scrollIntoView would scroll the whole side bar too).
    if (follow && scroller.current) scroller.current.scrollTop = scroller.current.scrollHeight;
  }, [lines, follow]);
  return (
    <div style={box} id="diag-log" data-testid="diag-log" role="region" aria-label={text("log")}>
      <div style={{ display: "flex", gap: 6, alignItems: "center", marginBottom: 6, flexWrap: "wrap" }}>
        <span style={{ fontWeight: 600, fontSize: 13 }}>{text("log")}</span>
        <button id="diag-follow" data-testid="diag-log-follow" aria-pressed={!follow} onClick={() => { setFrozen(lines); setFollow(!follow); }}
          style={{ ...small, border: "1px solid rgba(128,128,128,0.5)", borderRadius: 4, padding: "1px 6px" }}>
          {follow ? text("pause") : text("follow")}
        </button>
        <select id="diag-level" data-testid="diag-log-level" aria-label={text("log_level")} value={level} onChange={(e) => setLevel(e.target.value)}
          style={{ ...small, background: "transparent", border: "1px solid rgba(128,128,128,0.5)", borderRadius: 4 }}>
          <option value="all">{text("all_levels")}</option>
          <option value="INFO">INFO</option>
          <option value="WARNING">WARNING+</option>
          <option value="ERROR">ERROR</option>
        </select>
        <input id="diag-filter" data-testid="diag-log-filter" aria-label={text("filter_log")} placeholder={text("filter")} value={filter} onChange={(e) => setFilter(e.target.value)}
          style={{ ...small, flex: 1, minWidth: 60, background: "transparent", border: "1px solid rgba(128,128,128,0.5)",
            borderRadius: 4, padding: "1px 4px" }} />
      </div>
      <div ref={scroller} data-testid="diag-log-lines" role="log" aria-label={text("log_lines")} tabIndex={0}
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
  const text = useText();
  if (!probe || !probe.interval) return null;
  const last = probe.last;
  return (
    <div style={box} data-testid="diag-probe" data-degraded={probe.degraded ? "yes" : "no"}>
      <p style={heading}>{text("probe")}</p>
      <div style={small}>
        {probe.degraded ? text("probe_degraded", { count: probe.failures_in_a_row }) : text("probe_idle")}
        {" "}{probe.restart_after
          ? text("probe_restart_after", { interval: probe.interval, count: probe.restart_after })
          : text("probe_no_restart", { interval: probe.interval })}
      </div>
      {last ? (
        <div data-testid="diag-probe-last" data-ok={last.ok ? "yes" : "no"} style={{ ...small, marginTop: 4 }}>
          {text(last.ok ? "probe_answered" : "probe_failed", { ago: ago(text, now, last.at), seconds: last.seconds })}
          {last.ok ? null : <div style={{ ...mono, whiteSpace: "pre-wrap", wordBreak: "break-word" }}>{last.detail}</div>}
        </div>
      ) : null}
    </div>
  );
}

function LaunchDetail({ api, id }) {
  const text = useText();
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
  if (error) return <div style={{ ...small, color: "#dc2626" }}>{text("record_error", { error })}</div>;
  if (!record) return <div style={small}>{text("record_loading")}</div>;
  const overrides = Object.entries(record.overrides || {});
  return (
    <div data-testid="diag-launch-detail" style={{ marginTop: 4 }}>
      <div style={small}>{text("command_line")}</div>
      <div data-testid="diag-launch-command" style={{ ...mono, whiteSpace: "pre-wrap", wordBreak: "break-all" }}>
        {(record.command || []).join(" ")}
      </div>
      {overrides.length ? (
        <div style={{ ...small, marginTop: 4 }}>
          {text.nodes("record_overrides", {
            list: <span style={mono}>{overrides.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ")}</span> })}
        </div>
      ) : null}
      {(record.findings || []).length ? (
        <div data-testid="diag-launch-findings" style={{ ...small, marginTop: 4 }}>
          {text("findings_then", { list: record.findings.map((f) => (f.rule ? `${f.kind} (${f.rule})` : f.kind)).join(", ") })}
        </div>
      ) : null}
      <div style={{ ...small, marginTop: 4 }}>{text("last_lines", { count: (record.last_lines || []).length })}</div>
      <div data-testid="diag-launch-lines" ref={lines}
        style={{ ...mono, maxHeight: 240, overflowY: "auto", whiteSpace: "pre-wrap", wordBreak: "break-word" }}>
        {(record.last_lines || []).map((line, i) => <div key={i}>{line}</div>)}
      </div>
    </div>
  );
}

function LaunchEntry({ api, launch, now, startOpen }) {
  const text = useText();
  const [open, setOpen] = useState(startOpen);
  useEffect(() => { if (startOpen) setOpen(true); }, [startOpen]);  // the crash loop's record opens itself
  const when = launch.ended ? text("launch_ended", { ago: ago(text, now, launch.ended) })
    : text("launch_started", { ago: ago(text, now, launch.started) });
  return (
    <details data-testid="diag-launch" data-exit={launch.exit} data-launch-id={launch.id}
      data-gave-up={launch.gave_up ? "yes" : "no"} open={open}
      onToggle={(e) => setOpen(e.currentTarget.open)} style={{ marginTop: 4, fontSize: 12 }}>
      <summary>
        <span style={mono}>#{launch.launch}</span> {text("launch_when", { when })}
        <span data-testid="diag-launch-cause" style={{ color: launch.ended && launch.exit !== "stopped" ? "#dc2626" : undefined }}>
          {launch.cause}
        </span>
      </summary>
      {open ? <LaunchDetail api={api} id={launch.id} /> : null}
    </details>
  );
}

function Launches({ api, launches, engine, now }) {
  const text = useText();
  if (!launches || !launches.length) return null;
  const gaveUp = engine.state === "failed" && launches[0].gave_up;
  return (
    <div style={box} data-testid="diag-launches">
      <p style={heading}>{text("launches", { count: launches.length })}</p>
      {gaveUp ? (
        <div data-testid="diag-crash-loop" role="alert" style={{ ...small, color: "#dc2626", marginBottom: 4 }}>
          {text("crash_loop", { cause: launches[0].cause })}
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
    return { ok: false, message: null, status: null };
  }
  let data = null;
  try { data = await response.json(); } catch (e) { data = null; }
  if (!response.ok) {
    const detail = data && typeof data.detail === "string" ? data.detail : null;  // the server's own sentence
    return { ok: false, message: detail, status: response.status, data };
  }
  return { ok: true, data };
}

function refusal(text, result) {
  // A refusal's sentence comes from the server in the reader's language; without one, the status says it.
  if (result.message) return result.message;
  return result.status ? text("app_status", { status: result.status }) : text("unreachable");
}

function changeText(text, overrides, previous) {
  return Object.entries(overrides || {})
    .map(([k, v]) => `${k} ${previous && previous[k] !== null && previous[k] !== undefined ? previous[k] : text("unset")} → ${v}`)
    .join(", ");
}

function RemedyOutcome({ outcome }) {
  const text = useText();
  if (!outcome) return null;
  const params = { remedy: outcome.remedy, auto: outcome.auto ? text("automatic") : "" };
  const shown = outcome.state === "running"
    ? text("applying", params)
    : outcome.state === "verified"
      ? text("fixed", { ...params, seconds: outcome.seconds ? text("seconds", { seconds: outcome.seconds }) : "" })
      : text("not_fixed", { ...params, evidence: (outcome.evidence || []).join("; ") || text("see_log") });
  return (
    <div data-testid="diag-remedy-state" data-state={outcome.state} data-remedy={outcome.remedy} role="status"
      style={{ marginTop: 6, fontSize: 12.5, fontWeight: 600, color: OUTCOME_COLORS[outcome.state],
        whiteSpace: "pre-wrap", wordBreak: "break-word" }}>
      {shown}
    </div>
  );
}

function ConfirmRisk({ proposal, onConfirm, onCancel }) {
  const text = useText();
  return (
    <div data-testid="diag-remedy-confirm" role="alertdialog" aria-modal="true" aria-labelledby="diag-remedy-confirm-title"
      style={{ ...box, marginTop: 6, borderColor: "#dc2626" }}>
      <div id="diag-remedy-confirm-title" style={{ fontWeight: 600 }}>{text("unsafe", { changes: proposal.changes })}</div>
      <div data-testid="diag-remedy-risk" style={{ fontSize: 12.5, margin: "4px 0" }}>{proposal.risk}</div>
      <div style={{ display: "flex", gap: 6 }}>
        <button data-testid="diag-remedy-confirm-apply" aria-label={text("apply_anyway_label", { remedy: proposal.id })}
          style={{ ...button, borderColor: "#dc2626", color: "#dc2626" }} onClick={onConfirm}>{text("apply_anyway")}</button>
        <button data-testid="diag-remedy-confirm-cancel" aria-label={text("cancel")} style={button} onClick={onCancel}>{text("cancel")}</button>
      </div>
    </div>
  );
}

function RemedyControls({ f }) {
  const text = useText();
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
      setMessage(refusal(text, result));
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
          <div><b>{text("remedy")}</b><span style={mono}>{changeText(text, p.overrides, p.previous)}</span>{p.safe ? "" : text("not_safe")}</div>
          <div style={small}>{p.why} {p.reason}</div>
          <button data-testid="diag-remedy-apply" data-remedy={p.id} aria-label={text("apply_fix_label", { remedy: p.id })} disabled={busy}
            style={{ ...button, marginTop: 4, opacity: busy ? 0.5 : 1 }}
            onClick={() => (p.safe ? apply(p, false) : setAsking(p))}>
            {text("apply_fix")}
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
  const text = useText();
  const [pending, setPending] = useState(null);
  const [message, setMessage] = useState(null);
  const list = (overrides && overrides.overrides) || [];
  const running = remedies && remedies.running;
  const undo = async (remedy) => {
    setPending(remedy);
    setMessage(null);
    const result = await postJson("/api/remedies/undo", { remedy });
    setPending(null);
    if (!result.ok) setMessage(refusal(text, result));
    else if (result.data.fixed) setMessage(text("undone", { remedy }));
    else setMessage(text("undone_broken", { remedy, evidence: (result.data.evidence || []).join("; ") }));
  };
  return (
    <div style={box} data-testid="diag-overrides" aria-label={text("overrides")}>
      <p style={heading}>{text("overrides")} {remedies ? <span style={{ ...small, fontWeight: 400 }}>· {text("automatic_fixes", { mode: remedies.auto })}</span> : null}</p>
      {running ? (
        <div data-testid="diag-remedy-running" role="status" style={{ ...small, color: OUTCOME_COLORS.running }}>
          {text(running.action === "undo" ? "undoing_now" : "applying_now",
            { remedy: running.remedy, auto: running.auto ? text("automatic") : "" })}
        </div>
      ) : null}
      {overrides && overrides.problem ? <div style={{ ...small, color: "#dc2626" }}>{overrides.problem}</div> : null}
      {list.length === 0 ? <div style={small} data-testid="diag-no-overrides">{text("no_overrides")}</div> : null}
      {list.map((o) => (
        <div key={o.field} data-testid="diag-override" data-remedy={o.remedy} data-field={o.field}
          data-auto={o.auto ? "yes" : "no"} style={{ marginTop: 6, fontSize: 12.5 }}>
          <div style={{ display: "flex", justifyContent: "space-between", gap: 6, alignItems: "center" }}>
            <span><span style={mono}>{o.field}: {String(o.previous)} → {String(o.value)}</span>
              {" "}<span style={small}>({o.auto ? text("by_auto") : text("by_admin")})</span></span>
            <button data-testid="diag-remedy-undo" data-remedy={o.remedy} aria-label={text("undo_label", { remedy: o.remedy })}
              disabled={Boolean(running) || Boolean(pending)} style={{ ...button, opacity: running || pending ? 0.5 : 1 }}
              onClick={() => undo(o.remedy)}>
              {pending === o.remedy ? text("undoing") : text("undo")}
            </button>
          </div>
          <div style={small}>
            {text.nodes("set_by", { remedy: <span style={mono}>{o.remedy}</span>, kind: <span style={mono}>{o.finding_kind}</span>,
              line: o.finding_line ? text("line_suffix", { line: o.finding_line }) : "", text: o.finding_text })}
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
  const [labels, setLabels] = useState((props && props.labels) || {});
  const api = (props && props.api) || "/api/diagnostics";
  const interval = (props && props.interval) || 1000;

  useEffect(() => {
    let stopped = false;
    let timer = null;
    const poll = async () => {
      try {
        const response = await fetch(api, { credentials: "include", cache: "no-store" });
        if (response.status === 401) setError({ key: "login_again" });
        else if (response.status === 403) setError({ key: "admins_only" });
        else if (!response.ok) setError({ key: "api_status", params: { status: response.status } });
        else {
          const body = await response.json();
          if (body.labels) setLabels(body.labels);
          setData(body);
          setError(null);
        }
      } catch (e) {
        setError({ key: "unreachable" });
      }
      if (!stopped) timer = setTimeout(poll, interval);
    };
    poll();
    return () => { stopped = true; if (timer) clearTimeout(timer); };
  }, [api, interval]);

  const text = textOf(labels);
  if (!data) return <div data-testid="diag-loading" role="status" style={{ padding: 8, ...small }}>{error ? text(error.key, error.params) : text("loading")}</div>;
  const onTop = (f) => !f.resolved || Boolean(f.remedy_outcome); // a card a remedy was tried on stays in view
  const open = data.findings.filter(onTop);
  const resolved = data.findings.filter((f) => !onTop(f));
  const now = data.engine.now || Date.now() / 1000;
  return (
    <Labels.Provider value={labels}>
    <RemedyBus.Provider value={{ running: (data.remedies && data.remedies.running) || null }}>
    <div id="diagnostics-panel" data-testid="diag-panel" role="region" aria-label={text("panel")}
      style={{ padding: 4, fontSize: 13 }}>
      <style>{FOCUS_STYLE}</style>
      {error ? <div data-testid="diag-error" role="alert" style={{ ...small, ...flagged("#dc2626") }}>{text(error.key, error.params)}</div> : null}
      <Engine engine={data.engine} />
      <Launches api={api} launches={data.launches} engine={data.engine} now={now} />
      <HealthProbe probe={data.probe} now={now} />
      <div style={box} id="diag-findings" data-testid="diag-findings" role="region" aria-label={text("findings")}>
        <p style={heading}>{text("findings")} {open.length ? text("open_count", { count: open.filter((f) => !f.resolved).length }) : ""}</p>
        {open.length === 0 ? <div style={small} id="diag-no-findings" data-testid="diag-no-findings">{text("no_findings")}</div> : null}
        {open.map((f) => <FindingCard key={f.id} f={f} now={now} />)}
        {resolved.length ? (
          <details>
            <summary data-testid="diag-resolved" style={small}>{text("resolved_count", { count: resolved.length })}</summary>
            {resolved.map((f) => <FindingCard key={f.id} f={f} now={now} />)}
          </details>
        ) : null}
      </div>
      <Overrides overrides={data.overrides} remedies={data.remedies} />
      <Metrics metrics={data.metrics} />
      <LogTail lines={data.log_tail} />
    </div>
    </RemedyBus.Provider>
    </Labels.Provider>
  );
}
