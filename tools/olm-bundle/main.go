// olm-bundle makes and checks the OLM bundle of pxfa's controller (deploy/olm).
//
//	olm-bundle generate -deploy DIR -crd FILE -example FILE -version V -out DIR
//	olm-bundle validate DIR
//
// generate reads the same sources as `oc apply -f deploy/...`: the controller's
// ServiceAccount, Deployment, Service, and the Roles and ClusterRoles bound to that
// ServiceAccount (deploy/controller/controller.yaml and deploy/rbac/management.yaml),
// the CRD that `pxfa crd` prints and an example TenantStorage, and writes the bundle:
// manifests/ (the ClusterServiceVersion with its deployment install strategy and
// RBAC, the CRD, the Service) and metadata/annotations.yaml. Nothing in the bundle is
// written by hand, so it cannot drift from deploy/.
//
// validate loads a bundle with operator-framework's own loader (pkg/manifests) and runs
// its validators (pkg/validation): the default bundle validators (CSV, CRD, bundle),
// the object validator and the good-practices validator, as `operator-sdk bundle
// validate` does. Errors fail; warnings are printed.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "generate":
		err = generateCommand(os.Args[2:])
	case "validate":
		if len(os.Args) != 3 {
			usage()
		}
		err = validate(os.Args[2])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "olm-bundle: %v\n", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: olm-bundle generate -deploy DIR -crd FILE -example FILE -version V -out DIR | validate DIR")
	os.Exit(2)
}
