package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"
)

// k8sObject is what the test reads of a Kubernetes object.
type k8sObject struct {
	Kind string `yaml:"kind"`
	Spec struct {
		Replicas            int    `yaml:"replicas"`
		ServiceName         string `yaml:"serviceName"`
		PodManagementPolicy string `yaml:"podManagementPolicy"`
		Template            struct {
			Spec struct {
				Containers []struct {
					Args []string `yaml:"args"`
					Env  []struct {
						Name string `yaml:"name"`
					} `yaml:"env"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
}

// The Kubernetes examples stay true to serve: their arguments parse with its flags and pass the
// cluster's checks; every $(VAR) they use is set; the StatefulSet's routes name its own members,
// and it starts them in parallel (the first waits for a quorum before it is ready).
func TestKubernetesExamplesServe(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "examples", "kubernetes", "*.yaml"))
	if len(files) < 2 {
		t.Fatalf("examples/kubernetes holds %d manifests", len(files))
	}
	ref := regexp.MustCompile(`\$\(([A-Z_]+)\)`)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		served := 0
		for {
			var o k8sObject
			if err := dec.Decode(&o); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if o.Kind != "StatefulSet" && o.Kind != "Deployment" {
				continue
			}
			for _, c := range o.Spec.Template.Spec.Containers {
				set := map[string]bool{}
				for _, e := range c.Env {
					set[e.Name] = true
				}
				args := make([]string, len(c.Args))
				for i, a := range c.Args {
					args[i] = ref.ReplaceAllStringFunc(a, func(m string) string {
						name := ref.FindStringSubmatch(m)[1]
						if !set[name] {
							t.Errorf("%s: %s uses $(%s), which its env does not set", f, a, name)
						}
						if name == "DATABASE_URL" {
							return "postgres://u:p@db:5432/skillbox"
						}
						return o.Metadata.Name + "-0"
					})
				}
				if len(args) == 0 || args[0] != "serve" {
					t.Fatalf("%s: the container runs %v, not serve", f, args)
				}
				e := &env{}
				fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
				cmdServe.flags(fs, e)
				e.globalFlags(fs)
				if err := fs.Parse(args[1:]); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				if err := e.checkCluster(); err != nil {
					t.Errorf("%s: %v", f, err)
				}
				if o.Kind == "StatefulSet" {
					var want []string
					for i := range o.Spec.Replicas {
						want = append(want, fmt.Sprintf("%s-%d.%s:6222", o.Metadata.Name, i, o.Spec.ServiceName))
					}
					if got := strings.Join(e.cluster.Routes, ","); got != strings.Join(want, ",") {
						t.Errorf("%s: --cluster-routes %s, want its members %s", f, got, strings.Join(want, ","))
					}
					if o.Spec.PodManagementPolicy != "Parallel" {
						t.Errorf("%s: podManagementPolicy %q: the members must start together", f, o.Spec.PodManagementPolicy)
					}
				}
				served++
			}
		}
		if served == 0 {
			t.Errorf("%s runs no skillbox serve", f)
		}
	}
}
