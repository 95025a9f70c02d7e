package server

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"io"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/runtime"
)

// createSkill installs a new skill from multipart form files (skill.json or skill.yaml,
// execute.wasm, optional SKILL.md and resources/...) or a .tar.gz bundle of the same files.
// The id comes from the form field "id", else the manifest.
func (s *Server) createSkill(c echo.Context) error {
	id, files, err := s.readPackage(c, "")
	if err != nil {
		return err
	}
	sk, err := s.rt.Install(c.Request().Context(), id, files, runtime.InstallOptions{})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, summary(sk))
}

func (s *Server) updateSkill(c echo.Context) error {
	id, files, err := s.readPackage(c, c.Param("id"))
	if err != nil {
		return err
	}
	sk, err := s.rt.Install(c.Request().Context(), id, files, runtime.InstallOptions{Replace: true, MustExist: true})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, summary(sk))
}

func (s *Server) deleteSkill(c echo.Context) error {
	if err := s.rt.Remove(c.Request().Context(), c.Param("id")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) reload(c echo.Context) error {
	if err := s.rt.Reload(c.Request().Context()); err != nil {
		return err
	}
	return s.listSkills(c)
}

// readPackage reads an upload: multipart/form-data, or application/gzip (a .tar.gz). want, when
// set, is the id from the URL; a manifest naming another id is refused by Install's checks.
func (s *Server) readPackage(c echo.Context, want string) (string, map[string][]byte, error) {
	r := c.Request()
	r.Body = http.MaxBytesReader(c.Response(), r.Body, s.opts.MaxPackageBytes)
	ctype, _, _ := mime.ParseMediaType(r.Header.Get(echo.HeaderContentType))
	files := map[string][]byte{}
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
				return "", nil, badUpload(err)
			}
			data, err := io.ReadAll(part)
			if err != nil {
				return "", nil, badUpload(err)
			}
			switch {
			case part.FormName() == "id" && part.FileName() == "":
				if id == "" {
					id = strings.TrimSpace(string(data))
				}
			case part.FileName() != "":
				name := part.FormName() // the field name is the package path: "skill.json", "resources/a.md"
				if name == "" || name == "file" {
					name = part.FileName()
				}
				files[name] = data
			}
		}
	case "application/gzip", "application/x-gzip", "application/x-tar+gzip":
		var err error
		files, err = untar(r.Body)
		if err != nil {
			return "", nil, err
		}
	default:
		return "", nil, httpError(http.StatusUnsupportedMediaType, "unsupported_media_type",
			"send multipart/form-data (fields named skill.json, execute.wasm, SKILL.md, resources/...) or application/gzip (a .tar.gz)")
	}
	if id == "" {
		id = manifestID(files)
	}
	if id == "" {
		return "", nil, httpError(http.StatusUnprocessableEntity, "invalid_skill", "no id: send an id field or a manifest with an id")
	}
	return id, files, nil
}

func badUpload(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return err
	}
	return httpError(http.StatusBadRequest, "bad_request", "upload: %v", err)
}

// untar reads a .tar.gz package. A single top-level directory (skill/ or <id>/) is stripped.
func untar(r io.Reader) (map[string][]byte, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, badUpload(err)
	}
	tr := tar.NewReader(gz)
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, badUpload(err)
		}
		if h.Typeflag == tar.TypeDir {
			continue
		}
		if h.Typeflag != tar.TypeReg {
			return nil, httpError(http.StatusUnprocessableEntity, "invalid_skill", "%s: only regular files are allowed in a package (no links or devices)", h.Name)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, badUpload(err)
		}
		files[strings.TrimPrefix(h.Name, "./")] = data
	}
	// Strip one common top-level directory.
	var top string
	for name := range files {
		first, _, found := strings.Cut(name, "/")
		if !found || (top != "" && first != top) {
			return files, nil
		}
		top = first
	}
	if top == "" || top == "resources" {
		return files, nil
	}
	out := make(map[string][]byte, len(files))
	for name, data := range files {
		out[strings.TrimPrefix(name, top+"/")] = data
	}
	return out, nil
}

// manifestID reads the id from an uploaded manifest, leniently: Install does the real check.
func manifestID(files map[string][]byte) string {
	for _, name := range []string{"skill.json", "skill.yaml", "skill.yml"} {
		if data, ok := files[name]; ok {
			m, err := runtime.ParseManifest(path.Base(name), data)
			if err == nil {
				return m.ID
			}
			var se *runtime.SkillError
			if errors.As(err, &se) && se.ID != "" {
				return se.ID
			}
			return ""
		}
	}
	return ""
}
