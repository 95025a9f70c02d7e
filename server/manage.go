package server

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/bundle"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/spec"
)

// createSkill installs a new skill from multipart form files (skill.json or skill.yaml,
// execute.wasm, optional SKILL.md and resources/...) or a .tar.gz bundle of the same files.
// The id comes from the form field "id", else the manifest.
//
// ?visibility=user installs it as the caller's own: only the caller's key (and the tenant's
// admins) sees it and its runs. The default, org, is the tenant's.
func (s *view) createSkill(c echo.Context) error {
	return s.install(c, "", runtime.InstallOptions{}, http.StatusCreated)
}

// updateSkill replaces an installed skill where it is: the caller's own, or the tenant's.
func (s *view) updateSkill(c echo.Context) error {
	return s.install(c, c.Param("id"), runtime.InstallOptions{Replace: true, MustExist: true}, http.StatusOK)
}

// install reads an upload and installs it with opts, in the runtime its visibility names.
func (s *view) install(c echo.Context, want string, opts runtime.InstallOptions, status int) error {
	vis, err := visibility(c)
	if err != nil {
		return err
	}
	id, files, err := s.readPackage(c, want)
	if err != nil {
		return err
	}
	k, _ := c.Get(keyContext).(keyEntry)
	rt, err := s.installRuntime(c, k, vis)
	if err != nil {
		return err
	}
	opts.Face, opts.Who, opts.Visibility = run.FaceHTTP, k.Principal, vis
	sk, err := rt.Install(c.Request().Context(), id, files, opts)
	if err != nil {
		return err
	}
	return s.installed(c, rt, status, sk)
}

func (s *view) deleteSkill(c echo.Context) error {
	if err := s.rt.Remove(c.Request().Context(), principal(c), c.Param("id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *view) reload(c echo.Context) error {
	if err := s.rt.Reload(c.Request().Context()); err != nil {
		return err
	}
	return s.listSkills(c)
}

// readPackage reads an upload: multipart/form-data, or application/gzip (a .tar.gz). want, when
// set, is the id from the URL; a manifest naming another id is refused by Install's checks. The
// raw body is bounded by MaxPackageBytes; what it unpacks to, by the runtime's package limits,
// enforced while it streams in.
func (s *view) readPackage(c echo.Context, want string) (string, map[string][]byte, error) {
	r := c.Request()
	r.Body = http.MaxBytesReader(c.Response(), r.Body, s.opts.MaxPackageBytes)
	ctype, _, _ := mime.ParseMediaType(r.Header.Get(echo.HeaderContentType))
	pr := bundle.NewReader(s.rt.PackageLimits())
	id := want
	switch ctype {
	case "multipart/form-data":
		mr, err := r.MultipartReader()
		if err != nil {
			return "", nil, httpError(http.StatusBadRequest, "bad_request", "multipart: %v", err)
		}
		for {
			part, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				return "", nil, packageError(err)
			}
			if part.FileName() == "" { // a plain field: only "id" means anything
				v, err := pr.AddField(part.FormName(), part)
				if err != nil {
					return "", nil, packageError(err)
				}
				if part.FormName() == "id" && id == "" {
					id = strings.TrimSpace(string(v))
				}
				continue
			}
			name := part.FormName() // the field name is the package path: "skill.json", "resources/a.md"
			if name == "" || name == "file" {
				name = part.FileName()
			}
			if err := pr.Add(name, part); err != nil {
				return "", nil, packageError(err)
			}
		}
	case "application/gzip", "application/x-gzip", "application/x-tar+gzip":
		if err := pr.AddTarGz(r.Body); err != nil {
			return "", nil, packageError(err)
		}
	default:
		return "", nil, httpError(http.StatusUnsupportedMediaType, "unsupported_media_type",
			"send multipart/form-data (fields named skill.json, execute.wasm, SKILL.md, resources/...) or application/gzip (a .tar.gz)")
	}
	files := pr.Files()
	if id == "" {
		id = manifestID(files)
	}
	if id == "" {
		return "", nil, httpError(http.StatusUnprocessableEntity, "invalid_skill", "no id: send an id field or a manifest with an id")
	}
	return id, files, nil
}

// packageError translates what reading a package failed with: a crossed package limit is 413
// naming the limit, an entry that is not a regular file 422, a raw body over MaxPackageBytes
// goes to errorHandler as it is (413), anything else is a malformed upload (400).
func packageError(err error) error {
	var le *bundle.LimitError
	var me *spec.ManifestError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return err
	case errors.As(err, &le):
		return httpError(http.StatusRequestEntityTooLarge, "too_large", "%v", le)
	case errors.As(err, &me):
		return httpError(http.StatusUnprocessableEntity, "invalid_skill", "%v", me)
	}
	return httpError(http.StatusBadRequest, "bad_request", "upload: %v", err)
}

// manifestID reads the id from an uploaded manifest, leniently: Install does the real check.
func manifestID(files map[string][]byte) string {
	for _, name := range spec.ManifestFiles() {
		if data, ok := files[name]; ok {
			m, err := spec.ParseManifest(path.Base(name), data)
			if err == nil {
				return m.ID
			}
			var se *spec.SkillError
			if errors.As(err, &se) && se.ID != "" {
				return se.ID
			}
			return ""
		}
	}
	return ""
}
