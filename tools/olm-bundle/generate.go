package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

const (
	packageName = "pxfa-controller"
	// OLM's recommended channel names: candidate, fast, stable.
	channel  = "candidate"
	maturity = "alpha"
	// deploy/rbac/management.yaml's own example bindings name a user; the bundle
	// takes only the bindings of the controller's ServiceAccount.
	saFiles = "controller/controller.yaml rbac/management.yaml"
)

// sources: what deploy/ holds, by kind.
type sources struct {
	serviceAccount string
	deployment     *appsv1.Deployment
	services       []corev1.Service
	clusterRoles   map[string]rbacv1.ClusterRole
	roles          map[string]rbacv1.Role
	crbs           []rbacv1.ClusterRoleBinding
	rbs            []rbacv1.RoleBinding
}

func generateCommand(args []string) error {
	fs := flag.NewFlagSet("generate", flag.ExitOnError)
	deployDir := fs.String("deploy", "", "the deploy/ folder")
	crdFile := fs.String("crd", "", "the CRD `pxfa crd` prints")
	exampleFile := fs.String("example", "", "a TenantStorage example (alm-examples)")
	ver := fs.String("version", "", "the bundle's version (pxfa's)")
	out := fs.String("out", "", "the bundle folder to write (replaced)")
	_ = fs.Parse(args)
	if *deployDir == "" || *crdFile == "" || *exampleFile == "" || *ver == "" || *out == "" {
		usage()
	}
	src, err := readDeploy(*deployDir)
	if err != nil {
		return err
	}
	crdYAML, err := os.ReadFile(*crdFile)
	if err != nil {
		return err
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(crdYAML, &crd); err != nil {
		return fmt.Errorf("%s: %w", *crdFile, err)
	}
	example, err := readExample(*exampleFile)
	if err != nil {
		return err
	}
	v, err := semver.Parse(*ver)
	if err != nil {
		return fmt.Errorf("-version: %w", err)
	}
	csv, err := clusterServiceVersion(src, &crd, example, v)
	if err != nil {
		return err
	}
	return write(*out, csv, crdYAML, src.services)
}

// readDeploy reads the YAML documents of deploy/'s controller and RBAC files.
func readDeploy(dir string) (*sources, error) {
	src := &sources{clusterRoles: map[string]rbacv1.ClusterRole{}, roles: map[string]rbacv1.Role{}}
	for _, name := range strings.Fields(saFiles) {
		text, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		for i, doc := range bytes.Split(text, []byte("\n---\n")) {
			if err := src.add(doc); err != nil {
				return nil, fmt.Errorf("%s, document %d: %w", name, i+1, err)
			}
		}
	}
	if src.serviceAccount == "" || src.deployment == nil {
		return nil, errors.New("deploy/ has no ServiceAccount or no Deployment")
	}
	return src, nil
}

func (s *sources) add(doc []byte) error {
	var head metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return err
	}
	switch head.Kind {
	case "ServiceAccount":
		var sa corev1.ServiceAccount
		if err := yaml.UnmarshalStrict(doc, &sa); err != nil {
			return err
		}
		s.serviceAccount = sa.Name
	case "Deployment":
		s.deployment = &appsv1.Deployment{}
		return yaml.UnmarshalStrict(doc, s.deployment)
	case "Service":
		var svc corev1.Service
		if err := yaml.UnmarshalStrict(doc, &svc); err != nil {
			return err
		}
		svc.Namespace = "" // the OperatorGroup's namespace
		s.services = append(s.services, svc)
	case "ClusterRole":
		var r rbacv1.ClusterRole
		if err := yaml.UnmarshalStrict(doc, &r); err != nil {
			return err
		}
		s.clusterRoles[r.Name] = r
	case "Role":
		var r rbacv1.Role
		if err := yaml.UnmarshalStrict(doc, &r); err != nil {
			return err
		}
		s.roles[r.Name] = r
	case "ClusterRoleBinding":
		var b rbacv1.ClusterRoleBinding
		if err := yaml.UnmarshalStrict(doc, &b); err != nil {
			return err
		}
		s.crbs = append(s.crbs, b)
	case "RoleBinding":
		var b rbacv1.RoleBinding
		if err := yaml.UnmarshalStrict(doc, &b); err != nil {
			return err
		}
		s.rbs = append(s.rbs, b)
	case "Namespace", "":
		// OLM installs into the OperatorGroup's namespace.
	default:
		return fmt.Errorf("kind %s has no place in the bundle", head.Kind)
	}
	return nil
}

func (s *sources) bindsServiceAccount(subjects []rbacv1.Subject) bool {
	for _, sub := range subjects {
		if sub.Kind == "ServiceAccount" && sub.Name == s.serviceAccount {
			return true
		}
	}
	return false
}

// permissions: the rules of the ClusterRoles bound cluster-wide to the
// ServiceAccount (clusterPermissions) and of the Roles bound in its namespace
// (permissions), in the order deploy/ binds them.
func (s *sources) permissions() (cluster, namespaced []v1alpha1.StrategyDeploymentPermissions, err error) {
	var clusterRules, rules []rbacv1.PolicyRule
	for _, b := range s.crbs {
		if !s.bindsServiceAccount(b.Subjects) {
			continue
		}
		r, ok := s.clusterRoles[b.RoleRef.Name]
		if !ok {
			return nil, nil, fmt.Errorf("ClusterRoleBinding %s: no ClusterRole %s in deploy/", b.Name, b.RoleRef.Name)
		}
		clusterRules = append(clusterRules, r.Rules...)
	}
	for _, b := range s.rbs {
		if !s.bindsServiceAccount(b.Subjects) {
			continue
		}
		if b.RoleRef.Kind != "Role" {
			return nil, nil, fmt.Errorf("RoleBinding %s: a %s, the bundle takes Roles", b.Name, b.RoleRef.Kind)
		}
		r, ok := s.roles[b.RoleRef.Name]
		if !ok {
			return nil, nil, fmt.Errorf("RoleBinding %s: no Role %s in deploy/", b.Name, b.RoleRef.Name)
		}
		rules = append(rules, r.Rules...)
	}
	cluster = []v1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: s.serviceAccount, Rules: clusterRules}}
	namespaced = []v1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: s.serviceAccount, Rules: rules}}
	return cluster, namespaced, nil
}

func readExample(path string) (string, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var obj map[string]interface{}
	if err := yaml.Unmarshal(text, &obj); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	examples, err := json.MarshalIndent([]interface{}{obj}, "", "  ")
	return string(examples), err
}

func clusterServiceVersion(src *sources, crd *apiextensionsv1.CustomResourceDefinition, example string, v semver.Version) (*v1alpha1.ClusterServiceVersion, error) {
	cluster, namespaced, err := src.permissions()
	if err != nil {
		return nil, err
	}
	if len(crd.Spec.Versions) == 0 {
		return nil, errors.New("the CRD has no version")
	}
	dep := src.deployment
	image := dep.Spec.Template.Spec.Containers[0].Image
	csv := &v1alpha1.ClusterServiceVersion{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.ClusterServiceVersionKind},
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%s.v%s", packageName, v),
			Annotations: map[string]string{
				"alm-examples":   example,
				"capabilities":   "Basic Install",
				"containerImage": image,
				"operatorframework.io/suggested-namespace": dep.Namespace,
				"description": "TenantStorage controller: Portworx on Pure Storage FlashArray for OpenShift Hosted Control Plane tenants",
			},
		},
		Spec: v1alpha1.ClusterServiceVersionSpec{
			DisplayName: "pxfa controller",
			Description: "Reconciles TenantStorage objects: a hosted cluster's storage on a Pure Storage FlashArray " +
				"(array pods, hosts and volumes) and its Portworx or KubeVirt CSI configuration in the management and tenant clusters. " +
				"Generated from deploy/ by tools/olm-bundle; see docs/controller.md.",
			Version:        version.OperatorVersion{Version: v},
			Maturity:       maturity,
			MinKubeVersion: "1.31.0",
			Keywords:       []string{"portworx", "flasharray", "hypershift", "storage"},
			Provider:       v1alpha1.AppLink{Name: "pxfa"},
			Maintainers:    []v1alpha1.Maintainer{{Name: "pxfa", Email: "pxfa@example.invalid"}},
			Links:          []v1alpha1.AppLink{{Name: "Controller", URL: "https://example.invalid/pxfa/docs/controller.md"}},
			InstallModes: []v1alpha1.InstallMode{
				{Type: v1alpha1.InstallModeTypeOwnNamespace, Supported: false},
				{Type: v1alpha1.InstallModeTypeSingleNamespace, Supported: false},
				{Type: v1alpha1.InstallModeTypeMultiNamespace, Supported: false},
				{Type: v1alpha1.InstallModeTypeAllNamespaces, Supported: true},
			},
			CustomResourceDefinitions: v1alpha1.CustomResourceDefinitions{Owned: []v1alpha1.CRDDescription{{
				Name:        crd.Name,
				Version:     crd.Spec.Versions[0].Name,
				Kind:        crd.Spec.Names.Kind,
				DisplayName: "Tenant Storage",
				Description: "A hosted cluster's storage on a FlashArray.",
			}}},
			InstallStrategy: v1alpha1.NamedInstallStrategy{
				StrategyName: v1alpha1.InstallStrategyNameDeployment,
				StrategySpec: v1alpha1.StrategyDetailsDeployment{
					DeploymentSpecs: []v1alpha1.StrategyDeploymentSpec{{
						Name:  dep.Name,
						Label: dep.Labels,
						Spec:  dep.Spec,
					}},
					ClusterPermissions: cluster,
					Permissions:        namespaced,
				},
			},
		},
	}
	return csv, nil
}

// write replaces out with the bundle.
func write(out string, csv *v1alpha1.ClusterServiceVersion, crdYAML []byte, services []corev1.Service) error {
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	files := map[string]interface{}{
		"metadata/annotations.yaml": map[string]interface{}{"annotations": map[string]string{
			"operators.operatorframework.io.bundle.mediatype.v1":       "registry+v1",
			"operators.operatorframework.io.bundle.manifests.v1":       "manifests/",
			"operators.operatorframework.io.bundle.metadata.v1":        "metadata/",
			"operators.operatorframework.io.bundle.package.v1":         packageName,
			"operators.operatorframework.io.bundle.channels.v1":        channel,
			"operators.operatorframework.io.bundle.channel.default.v1": channel,
		}},
		"manifests/" + packageName + ".clusterserviceversion.yaml": csv,
	}
	for i := range services {
		services[i].TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}
		files[fmt.Sprintf("manifests/%s_v1_service.yaml", services[i].Name)] = services[i]
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	header := "# Generated by tools/olm-bundle from deploy/ and `pxfa crd` (scripts/olm-bundle.sh generate); do not edit.\n"
	for _, n := range names {
		body, err := yaml.Marshal(files[n])
		if err != nil {
			return err
		}
		if err := writeFile(filepath.Join(out, n), append([]byte(header), body...)); err != nil {
			return err
		}
	}
	return writeFile(filepath.Join(out, "manifests/tenantstorages.pxfa.io.crd.yaml"), crdYAML)
}

func writeFile(path string, body []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, body, 0o644)
}
