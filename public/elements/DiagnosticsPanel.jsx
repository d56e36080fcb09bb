import { useEffect, useRef, useState } from "react";

// Admin diagnostics: polls the JSON API itself (so closing the side bar keeps it closed).
// Every log text is rendered as React text, never as HTML.
// The data-testid, data-* and role/aria attributes are a supported interface for scripts (README,
// "Scripted UI tests"): they never depend on the display language; changing one is a breaking change.

const STATE_COLORS = {
  ready: "#16a34a", attached: "#2563eb", starting: "#d97706", preparing: "#d97706",
  restarting: "#d97706", stopping: "#6b7280", crashed: "#dc2626", failed: "#dc2626",
  stopped: "#6b7280", idle: "#6b7280",
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
  const open = data.findings.filter((f) => !f.resolved);
  const resolved = data.findings.filter((f) => f.resolved);
  const now = data.engine.now || Date.now() / 1000;
  return (
    <div id="diagnostics-panel" data-testid="diag-panel" role="region" aria-label="Diagnostics"
      style={{ padding: 4, fontSize: 13 }}>
      <style>{FOCUS_STYLE}</style>
      {error ? <div data-testid="diag-error" role="alert" style={{ ...small, ...flagged("#dc2626") }}>{error}</div> : null}
      <Engine engine={data.engine} />
      <div style={box} id="diag-findings" data-testid="diag-findings" role="region" aria-label="Findings">
        <p style={heading}>Findings {open.length ? `(${open.length} open)` : ""}</p>
        {open.length === 0 ? <div style={small} id="diag-no-findings" data-testid="diag-no-findings">No open findings: nothing wrong seen so far.</div> : null}
        {open.map((f) => <FindingCard key={f.id} f={f} now={now} />)}
        {resolved.length ? (
          <details>
            <summary data-testid="diag-resolved" style={small}>{resolved.length} resolved</summary>
            {resolved.map((f) => <FindingCard key={f.id} f={f} now={now} />)}
          </details>
        ) : null}
      </div>
      <Metrics metrics={data.metrics} />
      <LogTail lines={data.log_tail} />
    </div>
  );
}
