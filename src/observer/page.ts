/**
 * The Observer page: one static HTML document with one inline style and one inline script, both
 * allowed by hash in {@link OBSERVER_CSP} (nothing else runs, nothing loads from elsewhere). The
 * script opens one `EventSource` on `/events` — the browser reconnects by itself and sends
 * `Last-Event-ID` — and draws every seat from the events; it never polls the server. Its only
 * timer redraws the elapsed times from the clock, without any request. All text is set with
 * `textContent`, never as HTML.
 */
import { createHash } from "node:crypto";

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:0;background:#f6f6f4;color:#1c1c1c}
header{padding:12px 20px;background:#1c1c1c;color:#fff}
header h1{font-size:16px;margin:0}
#study{margin-top:4px;font-size:13px;color:#ddd}
#report{display:none;margin:12px 20px;padding:10px;background:#e7f3e7;border:1px solid #9c9}
#report.ready{display:block}
#seats{display:grid;grid-template-columns:repeat(auto-fill,minmax(320px,1fr));gap:12px;padding:12px 20px}
.seat{background:#fff;border:1px solid #ddd;border-radius:6px;padding:10px}
.seat h2{font-size:14px;margin:0 0 4px}
.meta{font-size:12px;color:#555}
.seat img{display:block;width:100%;margin-top:6px;border:1px solid #eee}
.seat pre{font-size:11px;background:#111;color:#ddd;padding:6px;overflow:auto;max-height:180px;white-space:pre-wrap}
`;

const SCRIPT = `
"use strict";
const seats = new Map();
let study = null;
const $ = (id) => document.getElementById(id);
function fmtMs(ms){ if(ms==null||ms<0) return "—"; const s=Math.round(ms/1000); return s<60? s+"s" : Math.floor(s/60)+"m "+String(s%60).padStart(2,"0")+"s"; }
function usd(v){ return v==null? "unknown" : "$"+v.toFixed(4); }
function card(s){
  let el = document.getElementById("seat-"+s.id);
  if(!el){
    el = document.createElement("section"); el.className="seat"; el.id="seat-"+s.id; el.dataset.seat=s.id;
    for(const k of ["h2","phase","elapsed","spend","tasks","frames"]){ const d=document.createElement(k==="h2"?"h2":"div"); d.className=k==="h2"?"":"meta "+k; el.appendChild(d); }
    const img=document.createElement("img"); img.alt=""; img.hidden=true;
    img.addEventListener("load",()=>{ el.dataset.shownFrame=img.dataset.frame||""; el.dataset.shownAt=String(Date.now()); });
    el.appendChild(img);
    const cmds=document.createElement("div"); cmds.className="meta commands"; el.appendChild(cmds);
    const pre=document.createElement("pre"); pre.hidden=true; el.appendChild(pre);
    $("seats").appendChild(el);
  }
  return el;
}
function draw(s){
  seats.set(s.id,s);
  const el=card(s);
  el.querySelector("h2").textContent=s.id;
  el.dataset.phase=s.phase;
  el.querySelector(".phase").textContent="phase: "+s.phase+(s.detail? " — "+s.detail : "")+(s.status? " · "+s.status : "");
  el.querySelector(".spend").textContent="model spend: "+usd(s.spendUsd)+" of cap "+(s.capUsd==null? "none" : "$"+s.capUsd);
  el.querySelector(".tasks").textContent="tasks checked: "+(s.tasks? s.tasks.passed+"/"+s.tasks.total+" passed" : "not yet")+(s.tasksDeclared!=null? " (of "+s.tasksDeclared+" hidden)" : "");
  el.querySelector(".frames").textContent=s.frames? "frames: "+s.frames : "";
  el.dataset.frames=String(s.frames);
  const img=el.querySelector("img");
  if(s.frame){
    const src="/frames/"+encodeURIComponent(s.id)+"/"+encodeURIComponent(s.frame.name)+".png?v="+encodeURIComponent(s.frame.v);
    if(img.getAttribute("src")!==src){ img.dataset.frame=s.frame.name; img.dataset.frameAt=String(s.frame.at); img.src=src; img.hidden=false; }
  }
  const pre=el.querySelector("pre");
  if(s.terminal){ pre.hidden=false; pre.textContent=s.terminal.lines.join("\\n"); el.querySelector(".commands").textContent=s.terminal.commands.length? "last: "+s.terminal.commands.join(" · ") : ""; }
  tick();
}
function drawStudy(v){
  study=v;
  document.title="humanish observer — "+v.runId;
  $("title").textContent=(v.lab||"study")+" · "+v.runId;
  $("study").textContent="phase: "+v.phase+" · "+v.reached+"/"+v.seats+" reached the goal so far ("+v.done+" of "+v.seats+" seats done)"+" · spend "+usd(v.spendUsd)+(v.capTotalUsd!=null? " of $"+v.capTotalUsd : "")+(v.verdict? " · "+v.verdict : "");
  $("study").dataset.state=v.state;
  const r=$("report");
  if(v.report){ r.className="ready"; const a=$("report-link"); a.href="/report"; a.textContent="Open the report"; }
}
function tick(){
  const now=Date.now();
  for(const s of seats.values()){
    const el=document.getElementById("seat-"+s.id); if(!el) continue;
    el.querySelector(".elapsed").textContent="elapsed: "+(s.startedAt==null? "—" : fmtMs((s.endedAt??now)-s.startedAt));
  }
}
const es=new EventSource("/events");
es.addEventListener("snapshot",(e)=>{ const v=JSON.parse(e.data); $("seats").textContent=""; seats.clear(); drawStudy(v.study); for(const s of v.seats) draw(s); });
es.addEventListener("seat",(e)=>draw(JSON.parse(e.data)));
es.addEventListener("study",(e)=>drawStudy(JSON.parse(e.data)));
es.addEventListener("open",()=>{ $("conn").textContent="live"; });
es.addEventListener("error",()=>{ $("conn").textContent=study&&study.state==="finished"? "the run is over" : "reconnecting…"; });
setInterval(tick,1000);
`;

const hash = (s: string) => createHash("sha256").update(s, "utf8").digest("base64");

/** The page's policy: its own style and script by hash, images and events from itself only. */
export const OBSERVER_CSP = `default-src 'none'; img-src 'self'; connect-src 'self'; style-src 'sha256-${hash(STYLE)}'; script-src 'sha256-${hash(SCRIPT)}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

/** The page's HTML (static: the data comes through `/events`). */
export function observerPageHtml(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="referrer" content="no-referrer">
<title>humanish observer</title><style>${STYLE}</style></head>
<body><header><h1 id="title">humanish observer</h1><div id="study">connecting…</div><div class="meta" id="conn"></div></header>
<div id="report"><a id="report-link" href="/report">Open the report</a></div>
<main id="seats"></main>
<script>${SCRIPT}</script></body></html>
`;
}
