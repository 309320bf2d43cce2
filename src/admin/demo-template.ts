import type { TemplateDefinition } from '../templates/definition/definition-types.js';

/** The template seed-demo imports (also in examples/onboarding-template.json). */
export const DEMO_TEMPLATE: TemplateDefinition = {
  name: 'Employee onboarding',
  pages: [
    {
      name: 'Personal details',
      dueInHours: 24,
      inputFields: [
        { inputId: 'full_name', fieldName: 'Full name', required: true },
        { inputId: 'email', fieldName: 'Email', required: true },
      ],
    },
    {
      name: 'Equipment',
      dueInHours: 72,
      inputFields: [{ inputId: 'laptop', fieldName: 'Laptop model' }],
    },
    {
      name: 'Manager approval',
      inputFields: [{ inputId: 'approved_by', fieldName: 'Approved by', required: true }],
    },
  ],
};
