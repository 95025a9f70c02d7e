package skill

import (
	"errors"
	"math"
	"testing"
)

type greetArgs struct {
	Name string `json:"name"`
}

type greeting struct {
	Greeting string `json:"greeting"`
}

func greet(ctx *Context, args greetArgs) (greeting, error) {
	switch args.Name {
	case "":
		return greeting{}, errors.New("name is empty")
	case "panic":
		panic("boom")
	case "nil":
		var m map[string]int
		m["x"]++ // a runtime error, not a string panic
	}
	ctx.Infof("greeting %s", args.Name)
	return greeting{"Hello, " + args.Name + "!"}, nil
}

func TestRun(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  string
	}{
		{"success", `{"name":"Ada"}`, `{"success":true,"result":{"greeting":"Hello, Ada!"}}`},
		{"handler error", `{"name":""}`, `{"success":false,"error":"name is empty"}`},
		{"empty input is {}", ``, `{"success":false,"error":"name is empty"}`},
		{"bad json", `{"name":`, `{"success":false,"error":"decode arguments: unexpected end of JSON input"}`},
		{"wrong type", `{"name":1}`, `{"success":false,"error":"decode arguments: json: cannot unmarshal number into Go struct field greetArgs.name of type string"}`},
		{"panic", `{"name":"panic"}`, `{"success":false,"error":"panic: boom"}`},
		{"runtime panic", `{"name":"nil"}`, `{"success":false,"error":"panic: assignment to entry in nil map"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeHost{in: []byte(tc.input)}
			if code := run(f, greet); code != 0 {
				t.Fatalf("return code %d, want 0", code)
			}
			if string(f.out) != tc.want {
				t.Fatalf("output %s\nwant   %s", f.out, tc.want)
			}
		})
	}
}

func TestRunEncodeFailure(t *testing.T) {
	f := &fakeHost{in: []byte(`{}`)}
	run(f, func(*Context, struct{}) (float64, error) { return math.NaN(), nil })
	if want := `{"success":false,"error":"encode result: json: unsupported value: NaN"}`; string(f.out) != want {
		t.Fatalf("output %s, want %s", f.out, want)
	}
}

func TestRunNilResult(t *testing.T) {
	f := &fakeHost{in: []byte(`{}`)}
	run(f, func(*Context, struct{}) (any, error) { return nil, nil })
	if want := `{"success":true,"result":null}`; string(f.out) != want {
		t.Fatalf("output %s, want %s", f.out, want)
	}
}
