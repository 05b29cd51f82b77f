package main

import (
	"fmt"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
)

// validate runs operator-framework's validators on the bundle in dir.
func validate(dir string) error {
	bundle, err := manifests.GetBundleFromDir(dir)
	if err != nil {
		return fmt.Errorf("loading the bundle in %s: %w", dir, err)
	}
	validators := append(interfaces.Validators{}, validation.DefaultBundleValidators...)
	validators = append(validators, validation.ObjectValidator, validation.GoodPracticesValidator)
	objects := bundle.ObjectsToValidate()
	failed := 0
	for _, result := range validators.Validate(objects...) {
		for _, w := range result.Warnings {
			fmt.Printf("warning: %s: %s\n", result.Name, w.Error())
		}
		for _, e := range result.Errors {
			fmt.Printf("error: %s: %s\n", result.Name, e.Error())
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d validation error(s) in %s", failed, dir)
	}
	fmt.Printf("ok: bundle %s (channels %v) passes operator-framework's validation\n", bundle.Name, bundle.Channels)
	return nil
}
