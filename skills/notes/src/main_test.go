package main

import (
	"reflect"
	"testing"

	"github.com/skillbox-dev/skillbox/sdk/go/skillboxtest"
)

// notesHost is the grant of skill.json: /workspace/notes, read-write.
func notesHost(opts ...skillboxtest.Option) *skillboxtest.Host {
	return skillboxtest.New(append([]skillboxtest.Option{skillboxtest.Mount(dir, skillboxtest.ReadWrite)}, opts...)...)
}

func text(s string) *string { return &s }

// TestActions runs the handler through a session of calls on one workspace, as a model
// would, and checks each result and the files left behind.
func TestActions(t *testing.T) {
	h := notesHost()
	steps := []struct {
		args args
		want string // the result JSON, or the error text
	}{
		{args{Action: "list"}, `{"notes":[]}`},
		{args{Action: "write", Name: "todo", Text: text("milk")}, `{"name":"todo","bytes":4}`},
		{args{Action: "append", Name: "todo", Text: text("eggs")}, `{"name":"todo","bytes":9}`},
		{args{Action: "append", Name: "ideas", Text: text("fly")}, `{"name":"ideas","bytes":3}`},
		{args{Action: "read", Name: "todo"}, `{"name":"todo","text":"milk\neggs"}`},
		{args{Action: "list"}, `{"notes":["ideas","todo"]}`},
		{args{Action: "write", Name: "todo", Text: text("")}, `{"name":"todo","bytes":0}`},
		{args{Action: "read", Name: "nope"}, `note "nope" not found`},
		{args{Action: "read", Name: "../etc"}, `invalid name "../etc": use 1 to 64 letters, digits, '.', '_' or '-'`},
		{args{Action: "write", Name: "x"}, "text is required for write"},
		{args{Action: "read"}, "name is required for read"},
		{args{Action: "delete", Name: "todo"}, `unknown action "delete": use write, read, list or append`},
	}
	for _, s := range steps {
		res := skillboxtest.Run(h, handle, s.args)
		got := string(res.Result)
		if !res.Success {
			got = res.Error
		}
		if got != s.want {
			t.Errorf("%+v:\n got %s\nwant %s", s.args, got, s.want)
		}
	}
	if got := h.Files(); !reflect.DeepEqual(got, []string{dir + "/ideas.md", dir + "/index.json", dir + "/todo.md"}) {
		t.Errorf("files %q", got)
	}
	if index, _ := h.File(indexPath); index != `["ideas","todo"]` {
		t.Errorf("index.json %s", index)
	}
	if got := h.Logs(); len(got) != 4 || got[1].String() != "info: append todo: 9 bytes" {
		t.Errorf("logs %v", got)
	}
}

// The host's refusals reach the model as the SDK words them, and a corrupt index is named.
func TestHostErrors(t *testing.T) {
	tests := []struct {
		name string
		host *skillboxtest.Host
		args args
		want string
	}{
		{"read-only mount", skillboxtest.New(skillboxtest.Mount(dir, skillboxtest.ReadOnly)),
			args{Action: "write", Name: "todo", Text: text("x")},
			"write_file: denied: /workspace/notes/todo.md: mount /workspace/notes is read-only"},
		{"no mount", skillboxtest.New(), args{Action: "list"},
			`read_file: denied: path "/workspace/notes/index.json" is outside the granted mounts (/skill)`},
		{"corrupt index", notesHost(skillboxtest.File(indexPath, "{")), args{Action: "list"},
			"/workspace/notes/index.json is corrupt: unexpected end of JSON input"},
		{"write quota", notesHost(skillboxtest.WithLimits(skillboxtest.Limits{MaxWriteBytes: 3})),
			args{Action: "write", Name: "todo", Text: text("milk")},
			"write_file: limit: /workspace/notes/todo.md: 4 more bytes would pass maxWriteBytes (3)"},
	}
	for _, tc := range tests {
		if res := skillboxtest.Run(tc.host, handle, tc.args); res.Success || res.Error != tc.want {
			t.Errorf("%s: %+v\nwant error %s", tc.name, res, tc.want)
		}
	}
}

// A note written when the index cannot be is kept, and writing it again repairs the
// index (see save). Quotas are per run; the workspace persists across runs.
func TestIndexRepair(t *testing.T) {
	h := notesHost(skillboxtest.WithLimits(skillboxtest.Limits{MaxWriteBytes: 9}))
	res := skillboxtest.Run(h, handle, args{Action: "write", Name: "a", Text: text("12345")})
	if want := "write_file: limit: /workspace/notes/index.json: 5 more bytes would pass maxWriteBytes (9)"; res.Error != want {
		t.Fatalf("first write: %+v, want error %s", res, want)
	}
	if note, ok := h.File(dir + "/a.md"); !ok || note != "12345" {
		t.Fatalf("note %q %v", note, ok)
	}
	if res := skillboxtest.Run(h, handle, args{Action: "write", Name: "a", Text: text("12")}); !res.Success {
		t.Fatalf("second write: %+v", res)
	}
	if index, _ := h.File(indexPath); index != `["a"]` {
		t.Errorf("index.json %s", index)
	}
}
