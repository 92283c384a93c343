"""The HTTP side (Starlette only): app wiring, middleware, protocol, limits, views.

The app's wiring, its middleware, the bounded HTTP protocol under uvicorn, the limits per
client, and one view module per resource (``views``). It is the only package that imports
Starlette or uvicorn; it imports everything else of the service, and nothing but the
command line imports it.
"""
