/**
 * The passkey scripts of the pages (docs/sign-in.md, "Passkeys"), allowed by their hashes in the
 * page's CSP: "Sign in with a passkey" on the sign-in page (also offered by the browser's autofill
 * where it supports conditional mediation), and the registration of a passkey by a signed-in
 * user, which a page of the account includes. Both speak to the core's JSON endpoints
 * (`Paths.passkeys`) with the page's good-once tickets, and convert WebAuthn's binary fields to
 * base64url JSON and back in plain browser JavaScript.
 */
import { createHash } from "node:crypto"

// base64url ⇄ ArrayBuffer, and a credential as the JSON the core's endpoints read
const codec = `const b64=(b)=>btoa(String.fromCharCode(...new Uint8Array(b))).replace(/\\+/g,"-").replace(/\\//g,"_").replace(/=+$/,"");
const bin=(s)=>Uint8Array.from(atob(s.replace(/-/g,"+").replace(/_/g,"/")+"===".slice((s.length+3)%4)),(c)=>c.charCodeAt(0));
const asJson=(c)=>{const r=c.response,o={};for(const k of ["clientDataJSON","authenticatorData","signature","userHandle","attestationObject"])if(r[k])o[k]=b64(r[k]);
if(r.getTransports)o.transports=r.getTransports();return JSON.stringify({id:c.id,rawId:b64(c.rawId),type:c.type,response:o,clientExtensionResults:c.getClientExtensionResults(),authenticatorAttachment:c.authenticatorAttachment})};
const post=async(url,fields)=>{const r=await fetch(url,{method:"POST",body:new URLSearchParams(fields),headers:{accept:"application/json"},credentials:"same-origin"});return{ok:r.ok,body:await r.json()}};`

/**
 * The sign-in page's script: the button (`#passkey`, its `data-challenge` and `data-login`
 * endpoints) and the form's ticket start a ceremony; its answer signs in and the page follows the
 * `location` answered. A conditional (autofill) request starts at once where the browser has it,
 * and is aborted when the button starts a request of its own.
 */
export const signInScript = `(()=>{${codec}
const b=document.getElementById("passkey"),f=b&&b.form,err=document.getElementById("passkey-error");
if(!b||!window.PublicKeyCredential)return;b.hidden=false;let ctl=null;
const run=async(mediation)=>{ctl&&ctl.abort();const mine=ctl=new AbortController();
const c=await post(b.dataset.challenge,{txn:f.txn.value,csrf_token:f.csrf_token.value});if(!c.ok)throw new Error(c.body.error);
const p=c.body.publicKey;const cred=await navigator.credentials.get({mediation,signal:mine.signal,publicKey:{challenge:bin(p.challenge),rpId:p.rpId,timeout:p.timeout,userVerification:p.userVerification,allowCredentials:[]}});
const d=await post(b.dataset.login,{txn:c.body.txn,csrf_token:c.body.csrf_token,credential:asJson(cred)});
if(d.ok&&d.body.location)location.assign(d.body.location);else throw new Error(d.body.error)};
const fail=(e)=>{if(e&&e.name==="AbortError")return;err.hidden=false};
b.addEventListener("click",()=>{err.hidden=true;run("optional").catch(fail)});
if(PublicKeyCredential.isConditionalMediationAvailable)PublicKeyCredential.isConditionalMediationAvailable().then((ok)=>{if(ok)run("conditional").catch(()=>{})});
})()`

/**
 * The registration script a page of the account includes: it defines
 * `latchkeyRegisterPasskey(endpoint, name)`, which lists the user's passkeys for a ticket, asks
 * for the options, runs `navigator.credentials.create()` and registers the answer; it resolves
 * with the endpoint's JSON (`passkey`, and the next ticket).
 */
const register = `window.latchkeyRegisterPasskey=async(url,name)=>{const l=await (await fetch(url,{headers:{accept:"application/json"},credentials:"same-origin"})).json();
const o=await post(url,{txn:l.txn,csrf_token:l.csrf_token,action:"options"});if(!o.ok)throw new Error(o.body.error);const p=o.body.publicKey;
const cred=await navigator.credentials.create({publicKey:{...p,challenge:bin(p.challenge),user:{...p.user,id:bin(p.user.id)},excludeCredentials:(p.excludeCredentials||[]).map((c)=>({...c,id:bin(c.id)}))}});
const r=await post(url,{txn:o.body.txn,csrf_token:o.body.csrf_token,action:"register",credential:asJson(cred),name:name||""});if(!r.ok)throw new Error(r.body.error_description||r.body.error);return r.body}`

/** The registration script (`register`), on its own. */
export const registerScript = `(()=>{${codec}
${register}})()`

/**
 * The account page's script: the registration (`register`), run by the passkeys section's Add form
 * (`#passkey-add`, its `data-endpoint`, its `passkey_name` field), shown only where the browser has
 * WebAuthn; once added, the page is loaded again to list it, else the form's error line shows.
 */
export const accountScript = `(()=>{${codec}
${register};
const f=document.getElementById("passkey-add"),err=document.getElementById("passkey-add-error");
if(!f||!window.PublicKeyCredential)return;f.hidden=false;
f.addEventListener("submit",(e)=>{e.preventDefault();err.hidden=true;
window.latchkeyRegisterPasskey(f.dataset.endpoint,f.elements.namedItem("passkey_name").value).then(()=>location.reload(),()=>{err.hidden=false})})})()`

const hashOf = (script: string) => `'sha256-${createHash("sha256").update(script).digest("base64")}'`

/** The CSP source allowing the sign-in page's passkey script. */
export const signInScriptSource = hashOf(signInScript)

/** The CSP source allowing the registration script. */
export const registerScriptSource = hashOf(registerScript)

/** The CSP source allowing the account page's script. */
export const accountScriptSource = hashOf(accountScript)
