"""What a family declares and what the build records: forms (Form, Family, Runtime), steps
(Step) and their context (BuildContext), the manifest (StepRecord, availability of a form), and
the reference page's figures and claims each family sets (a1_page)."""
