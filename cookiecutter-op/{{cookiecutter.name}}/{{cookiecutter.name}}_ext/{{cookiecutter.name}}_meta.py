{% include "meta/{{cookiecutter.name}}_meta.py" %}
