package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/skillbox-dev/skillbox/internal/docbound"
	"github.com/skillbox-dev/skillbox/run"
)

// errNoRemoteRefs refuses every $ref the schema would load from elsewhere: a manifest must not make
// the host read its files ("file:///etc/passwd") or the network.
var errNoRemoteRefs = errors.New("schemas may not load external references; inline them")

type refusingLoader struct{}

func (refusingLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s: %w", url, errNoRemoteRefs)
}

// Schema is a compiled argument schema.
type Schema struct {
	raw      json.RawMessage
	compiled *jsonschema.Schema
	defaults map[string]any
	// nullMeansOmitted are the declared top-level properties whose schema refuses null: a null
	// sent for one of them is read as the argument left out (see Prepare).
	nullMeansOmitted []string
	// empty is Prepare's answer for no arguments ({}), worked out once: a skill called without
	// arguments is the commonest call, and validating {} afresh cost a trivial run a fifth of its
	// allocations.
	empty    []byte
	emptyErr error
}

const schemaURL = "mem:///skill/parameters.json"

// compiledSchemas remembers the schemas compiled, by their JSON: a scan compiles every
// manifest's parameters, and compiling (the schema checked against the draft's metaschema
// first) cost most of a scan of ten thousand skills, most of which share a few schemas (the
// empty one of skills without parameters, first of all). A Schema is immutable, so skills share
// one. At most maxCompiledSchemas are kept; when full, it starts over.
var compiledSchemas = struct {
	sync.Mutex
	m map[string]*Schema
}{m: map[string]*Schema{}}

const maxCompiledSchemas = 4096

// CompileSchema compiles a schema and refuses one whose validation could take too long (a
// *SchemaCostError). A schema compiled before is not compiled again.
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	key := string(raw)
	compiledSchemas.Lock()
	s, ok := compiledSchemas.m[key]
	compiledSchemas.Unlock()
	if ok {
		return s, nil
	}
	s, err := compileSchemaOnce(bytes.Clone(raw))
	if err != nil {
		return nil, err
	}
	compiledSchemas.Lock()
	if len(compiledSchemas.m) >= maxCompiledSchemas {
		compiledSchemas.m = map[string]*Schema{}
	}
	compiledSchemas.m[key] = s
	compiledSchemas.Unlock()
	return s, nil
}

func compileSchemaOnce(raw json.RawMessage) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(refusingLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil, err
	}
	if err := checkSchemaCost(s); err != nil {
		return nil, err
	}
	out := &Schema{raw: raw, compiled: s, defaults: map[string]any{}}
	if obj, ok := doc.(map[string]any); ok {
		if props, ok := obj["properties"].(map[string]any); ok {
			for name, p := range props {
				if pm, ok := p.(map[string]any); ok {
					if d, has := pm["default"]; has {
						out.defaults[name] = d
					}
				}
			}
		}
	}
	for name, p := range s.Properties {
		if p.Validate(nil) != nil {
			out.nullMeansOmitted = append(out.nullMeansOmitted, name)
		}
	}
	sort.Strings(out.nullMeansOmitted)
	out.empty, out.emptyErr = out.prepare([]byte("{}"))
	return out, nil
}

// JSON returns the schema as JSON.
func (s *Schema) JSON() json.RawMessage { return s.raw }

// Prepare checks args (a JSON object; empty means {}, nested at most docbound.MaxArgsDepth
// levels) against the schema, after filling in the defaults of missing top-level arguments, and
// returns the arguments the module will receive. The error is a *run.Error of kind invalid_args
// whose message names each failing argument.
//
// # Null means omitted
//
// A top-level argument whose value is null, declared in the schema's "properties" with a schema
// that does not accept null, is dropped before anything else: it is read as left out, so its
// default applies (or, for a required one, the error says it is missing). OpenAI's strict mode
// makes every property required and has the model send null for each optional one it leaves
// out, and models without it often do the same; a client forwarding such a call (an MCP client
// built on an OpenAI SDK, an HTTP caller, the agent helpers) should not have to know which
// faces mind. The rule lives here, where every face's run validates its arguments, not where
// strict schemas are written: the null arrives on every face, whoever wrote the schema the
// model saw. A property whose schema accepts null ("type": ["string", "null"], {} ...) keeps
// its null; an undeclared argument is not dropped, so a typo is still named; nulls nested
// inside an argument are values and are kept.
func (s *Schema) Prepare(args []byte) ([]byte, error) {
	if t := bytes.TrimSpace(args); len(t) == 0 || string(t) == "{}" {
		// The input is shared: the caller only reads it (the kernel copies it into the run's
		// memory). The error is not: the run fills in its skill and cuts its message.
		if re, ok := s.emptyErr.(*run.Error); ok {
			c := *re
			return nil, &c
		}
		return s.empty, s.emptyErr
	}
	return s.prepare(args)
}

func (s *Schema) prepare(args []byte) ([]byte, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return nil, run.Errorf(run.KindInvalidArgs, "", err, "arguments are not valid JSON: %v", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, run.Errorf(run.KindInvalidArgs, "", nil, "arguments must be a JSON object, not %s", TypeName(v))
	}
	for _, name := range s.nullMeansOmitted {
		if v, has := obj[name]; has && v == nil {
			delete(obj, name)
		}
	}
	// Validating a deep value costs the square of its depth (encoding/json alone allows 10,000
	// levels): bound it before the validator sees it.
	if b := docbound.Args(obj); b != nil {
		return nil, run.Errorf(run.KindInvalidArgs, "", b, "argument %q nests deeper than %d levels; send flatter arguments", b.Path, b.Limit)
	}
	for name, d := range s.defaults {
		if _, has := obj[name]; !has {
			obj[name] = d
		}
	}
	if err := s.compiled.Validate(obj); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return nil, run.Errorf(run.KindInvalidArgs, "", err, "%s", describe(ve))
		}
		return nil, run.Errorf(run.KindInvalidArgs, "", err, "%v", err)
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, run.Errorf(run.KindInternal, "", err, "encode arguments: %v", err)
	}
	return out, nil
}

// describe turns a validation error into one line per failing argument, such as
// `argument "size": value must be one of "512x512", "1024x1024"`.
func describe(ve *jsonschema.ValidationError) string {
	out := ve.BasicOutput()
	var lines []string
	seen := map[string]bool{}
	for _, u := range out.Errors {
		if u.Error == nil {
			continue
		}
		msg := u.Error.String()
		if strings.HasPrefix(msg, "validation failed") {
			continue
		}
		where := "arguments"
		if u.InstanceLocation != "" {
			where = fmt.Sprintf("argument %q", strings.TrimPrefix(u.InstanceLocation, "/"))
		}
		line := where + ": " + msg
		if !seen[line] {
			seen[line] = true
			lines = append(lines, line)
		}
	}
	if len(lines) == 0 {
		return ve.Error()
	}
	sort.Strings(lines)
	return strings.Join(lines, "; ")
}
