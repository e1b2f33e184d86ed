"""MindFlow poisson case: geometry, boundary conditions, dataset, model, equation (a regular
package, so that another example's ``src`` earlier on ``sys.path`` cannot shadow it)."""
