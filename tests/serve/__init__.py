"""The service's tests, in packages that mirror tripletsearch.serve."""
