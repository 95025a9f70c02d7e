package runtime

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
)

// ctx.env is called or read as an object, as skills written for other runtimes read it (Devai's
// execute.ts reads ctx.env.OPENAI_API_KEY): the same value either way, a name not granted (even
// one the policy has for other skills) null when called, undefined or None when read, and
// nothing written to it.
func TestCtxEnvIsCalledOrRead(t *testing.T) {
	dir := t.TempDir()
	manifest := func(id string) string { return simple(id, `"permissions":{"env":["A"]}`) }
	scriptFixture(t, dir, "js", manifest("js"), map[string]string{"execute.js": `export function execute(args, ctx) {
  const threw = (f) => { try { f(); return "none"; } catch (e) { return e.name; } };
  console.log(ctx.env);
  return {call: ctx.env("A"), prop: ctx.env.A, item: ctx.env["A"], missing: ctx.env.B === undefined,
    has: "A" in ctx.env, hasNot: "B" in ctx.env, type: typeof ctx.env, keys: Object.keys(ctx.env).length,
    write: threw(() => { ctx.env.A = "x"; }), del: threw(() => { delete ctx.env.A; }), still: ctx.env.A,
    calledMissing: ctx.env("B"), then: ctx.env.then === undefined, name: ctx.env.name === undefined};
}`})
	scriptFixture(t, dir, "py", manifest("py"), map[string]string{"execute.py": `def threw(f):
    try:
        f()
        return "none"
    except Exception as e:
        return type(e).__name__

def execute(args, ctx):
    print(ctx.env)
    def write():
        ctx.env.A = "x"
    def item():
        ctx.env["A"] = "x"
    return {"call": ctx.env("A"), "prop": ctx.env.A, "item": ctx.env["A"], "missing": ctx.env.B is None,
            "has": "A" in ctx.env, "hasNot": "B" in ctx.env, "type": callable(ctx.env), "keys": 0,
            "write": threw(write), "del": threw(item), "still": ctx.env.A,
            "calledMissing": ctx.env("B"), "then": ctx.env.get is None, "name": hasattr(ctx.env, "__deepcopy__") is False}
`})
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Policy: &policy.Policy{Env: map[string]string{"A": "a", "B": "b"}}})
	want := map[string]string{
		"js": `{"call":"a","prop":"a","item":"a","missing":true,"has":true,"hasNot":false,"type":"function","keys":0,"write":"TypeError","del":"TypeError","still":"a","calledMissing":null,"then":true,"name":true}`,
		"py": `{"call":"a","prop":"a","item":"a","missing":true,"has":true,"hasNot":false,"type":true,"keys":0,"write":"TypeError","del":"TypeError","still":"a","calledMissing":null,"then":true,"name":true}`,
	}
	for id, w := range want {
		res, err := rt.Run(context.Background(), run.Request{Skill: id, Who: testAdmin})
		if err != nil || string(res.Result) != w {
			t.Errorf("%s: %s, %v\n want %s", id, res.Result, err, w)
		}
	}
}

// Devai-shaped code reads its API key from ctx.env and sets the header itself. The server sees the
// key; the skill, its result and its logs see only the placeholder; a copy of the placeholder
// sent elsewhere in the request stays a placeholder.
func TestCodeThatSetsItsOwnKeyHeaderWorks(t *testing.T) {
	const key = "sk-test-key-value"
	var gotAuth, gotEcho string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth, gotEcho = r.Header.Get("Authorization"), r.Header.Get("X-Echo")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	secrets := `"parameters":{"url":{"type":"string"}},"permissions":{"network":["127.0.0.1"],"secrets":[{"name":"OPENAI_API_KEY","hosts":["127.0.0.1"],"header":"Authorization","format":"Bearer {value}"}]}`
	scriptFixture(t, dir, "devai", simple("devai", secrets), map[string]string{"execute.ts": `export async function execute(args: {url: string}, ctx: any) {
  const key = ctx.env.OPENAI_API_KEY;
  console.log("key " + key);
  const r = await ctx.fetch(args.url, {headers: {Authorization: "Bearer " + key, "X-Echo": key}});
  return {status: r.status, key};
}`})
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	pol := &policy.Policy{Network: []string{"127.0.0.1"}, AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		Secrets: map[string]policy.Secret{"OPENAI_API_KEY": {Value: key, Hosts: []string{"127.0.0.1"}}}, RootCAs: pool}
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Policy: pol})
	res, err := rt.Run(context.Background(), run.Request{Skill: "devai", Args: []byte(`{"url":"` + srv.URL + `/v1/chat"}`), Who: testAdmin})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Status int
		Key    string
	}
	must(t, json.Unmarshal(res.Result, &got))
	if gotAuth != "Bearer "+key || got.Status != 200 || !strings.HasPrefix(got.Key, "skillbox-secret-") || gotEcho != got.Key {
		t.Fatalf("server saw Authorization %q, X-Echo %q; the skill got %s", gotAuth, gotEcho, res.Result)
	}
	logs, _ := json.Marshal(res.Logs)
	if strings.Contains(string(res.Result)+string(logs), key) {
		t.Fatal("the key reached the skill")
	}
}

// A check warns of each name a script skill's code reads from ctx.env that its manifest does not
// ask for, at the file and line of the read, once per name and file; a name asked for as a
// variable or a secret, a program's process.env, and the names JavaScript probes are not warned of.
func TestACheckWarnsOfEnvReadsNotAskedFor(t *testing.T) {
	dir := t.TempDir()
	asks := `"permissions":{"env":["REGION"],"secrets":[{"name":"API_KEY","hosts":["api.example.com"],"header":"Authorization"}]}`
	scriptFixture(t, dir, "reads", simple("reads", asks), map[string]string{
		"execute.ts": "export async function execute(args: any, context: any) {\n" +
			"  const k = context.env.API_KEY, r = context.env('REGION');\n" +
			"  const o = context.env.OPENAI_API_KEY;\n" +
			"  await context.env.then;\n" +
			"  return [k, r, o, context.env[\"OPENAI_API_KEY\"], process.env.HOME];\n}\n",
		"lib/util.py": "def token(ctx):\n    return ctx.env[\"GH_TOKEN\"] or ctx.env(\"REGION\")\n",
	})
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	checked := rt.CheckSkills(context.Background(), dir)
	if len(checked) != 1 {
		t.Fatalf("%d skills checked", len(checked))
	}
	got := strings.Join(checked[0].Warnings(), "\n")
	for _, want := range []string{
		"reads/execute.ts:3: reads the environment variable OPENAI_API_KEY, which skill.json does not ask for",
		`add "OPENAI_API_KEY" to permissions.env`,
		"reads/lib/util.py:2: reads the environment variable GH_TOKEN",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings do not say %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"API_KEY,", "REGION", "HOME", "then", "execute.ts:4"} {
		if strings.Contains(got, "variable "+not) || strings.Contains(got, not+":") {
			t.Errorf("warned of %q:\n%s", not, got)
		}
	}
	if n := strings.Count(got, "OPENAI_API_KEY, which"); n != 1 {
		t.Errorf("OPENAI_API_KEY warned of %d times in one file, want once:\n%s", n, got)
	}
}
