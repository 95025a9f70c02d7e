package runtime

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/run"
)

func TestInterpretOutput(t *testing.T) {
	tests := []struct {
		out, value, skillErr string
	}{
		{out: `{"success":true,"result":{"a":1}}`, value: `{"a":1}`},
		{out: `{"success":true}`, value: `null`},
		{out: `{"success":false,"error":"no such city"}`, skillErr: "no such city"},
		{out: `{"success":false,"error":{"message":"quota","code":7}}`, skillErr: "quota"},
		{out: `{"success":false}`, skillErr: "the skill reported failure without an error message"},
		{out: `{"answer":42}`, value: `{"answer":42}`}, // plain Extism plugin output: the value itself
		{out: ` [1,2] `, value: `[1,2]`},
		{out: `hello world`, value: `"hello world"`},
		{out: "bad \xff utf8", value: "\"bad \uFFFD utf8\""},
		{out: ``, value: `null`},
		// encoding/json matches keys case-insensitively, with Unicode folding and escapes: the
		// shortcut that skips decoding objects without a "success" must see all of those.
		{out: `{"SUCCESS":false,"error":"upper"}`, skillErr: "upper"},
		{out: `{"\u0073uccess":false,"error":"escaped"}`, skillErr: "escaped"},
		{out: `{"ſuccess":false,"error":"folded"}`, skillErr: "folded"},
		{out: `{"success":null,"result":1}`, value: `{"success":null,"result":1}`},
		{out: `{"success":"yes","result":1}`, value: `{"success":"yes","result":1}`},
		{out: `{"succes":false}`, value: `{"succes":false}`},
	}
	for _, tc := range tests {
		v, e := interpret([]byte(tc.out))
		if e != tc.skillErr || (tc.skillErr == "" && string(v) != tc.value) {
			t.Errorf("%q: got (%s, %q), want (%s, %q)", tc.out, v, e, tc.value, tc.skillErr)
		}
	}
}

func TestEntrypoint(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "default", simple("default", ""), "noexport")
	fixture(t, dir, "named", simple("named", `"entrypoint":"run"`), "noexport")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	if _, err := rt.Run(context.Background(), run.Request{Skill: "default", Who: testAdmin}); !errors.Is(err, run.ErrTrap) || !strings.Contains(err.Error(), `does not export "execute"`) {
		t.Errorf("missing export: %v", err)
	}
	res, err := rt.Run(context.Background(), run.Request{Skill: "named", Who: testAdmin})
	if err != nil || string(res.Result) != "7" {
		t.Errorf("named entrypoint: %v %s", err, res.Result)
	}
	s, _ := rt.CheckSkill(context.Background(), dir+"/default")
	if s.Status() != catalog.StatusError || !strings.Contains(s.Err().Error(), `does not export the entrypoint "execute" (it exports [run])`) {
		t.Errorf("check: %v", s.Err())
	}
	if s, _ := rt.CheckSkill(context.Background(), dir+"/named"); s.Status() != catalog.StatusActive {
		t.Errorf("check named: %v", s.Err())
	}
}

func TestEventsArriveInOrder(t *testing.T) {
	rt := newRuntime(t, Config{SkillDirs: []string{"../skills"}})
	var mu sync.Mutex
	var types []string
	res, err := rt.Run(context.Background(), run.Request{Skill: "hello", Args: []byte(`{"name":"Ada"}`), OnEvent: func(e run.Event) {
		mu.Lock()
		defer mu.Unlock()
		types = append(types, e.Type)
		if e.Type == "log" && e.Log.Message != "greeting Ada" {
			t.Errorf("log event %+v", e.Log)
		}
		if e.Type == "result" && e.Result == nil {
			t.Errorf("result event without a result")
		}
	}, Who: testAdmin})
	if err != nil || string(res.Result) != `{"greeting":"Hello, Ada!"}` {
		t.Fatalf("%v %s", err, res.Result)
	}
	if strings.Join(types, ",") != "status,status,log,result" {
		t.Fatalf("events %v", types)
	}
}

// Runs share nothing: a fresh instance each time, even concurrently.
func TestConcurrentRunsAreIsolated(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "echo", simple("echo", `"parameters":{"type":"object"}`), "echo")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			arg := `{"n":` + strings.Repeat("1", i+1) + `}`
			res, err := rt.Run(context.Background(), run.Request{Skill: "echo", Args: []byte(arg), Who: testAdmin})
			if err != nil || string(res.Result) != arg {
				t.Errorf("run %d: %v %s", i, err, res.Result)
			}
		}(i)
	}
	wg.Wait()
}

// No arguments and "args": null are {}: the runtime decides it once, so every face (which only
// passes the client's document on) runs the same skill with the same input, and records the same
// hash of it.
func TestNullArgumentsAreAnEmptyObject(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "echo", simple("echo", `"parameters":{"type":"object"}`), "echo")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	var hashes []string
	for _, args := range []string{"", "null", " null\n", "{}"} {
		res, err := rt.Run(context.Background(), run.Request{Skill: "echo", Args: []byte(args), Who: testAdmin})
		if err != nil || string(res.Result) != "{}" {
			t.Fatalf("args %q: %v, result %s; want {}", args, err, res.Result)
		}
		rec, ok := rt.RunRecord(testAdmin, res.RunID)
		if !ok {
			t.Fatalf("args %q: no record", args)
		}
		hashes = append(hashes, rec.ArgsSHA256)
	}
	for i, h := range hashes {
		if h != hashes[3] {
			t.Errorf("record %d hashes its arguments as %s, {} as %s", i, h, hashes[3])
		}
	}
	if _, err := rt.Run(context.Background(), run.Request{Skill: "echo", Args: []byte(`[]`), Who: testAdmin}); !errors.Is(err, run.ErrInvalidArgs) {
		t.Errorf("args []: %v, want invalid_args", err)
	}
}
